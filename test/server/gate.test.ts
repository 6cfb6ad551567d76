// The fair gate on checks in flight (src/server/gate.ts): past its limit a caller with fewer in flight takes the
// place of one of the caller with the most, which runs on uncounted; the caller with the most is refused; never
// more than the limit is set aside.

import { describe, expect, it } from 'vitest';
import { Gate, type Ticket } from '../../src/server/gate.js';

describe('Gate', () => {
  it('admits up to its limit, then refuses the caller that holds the most', () => {
    const gate = new Gate(2);
    expect(gate.enter(['flood'])).toBeDefined();
    expect(gate.enter(['flood'])).toBeDefined();
    expect(gate.enter(['flood'])).toBeUndefined();
    expect(gate.inFlight).toBe(2);
  });

  it("lets kubelet in past the limit in place of a flooder's check, which is set aside and still left once", () => {
    const gate = new Gate(2);
    const flood = [gate.enter(['flood']), gate.enter(['flood'])] as Ticket[];
    const kubelet = gate.enter(['kubelet']) as Ticket;
    expect(kubelet).toBeDefined();
    expect(flood.filter((t) => t.setAside)).toHaveLength(1);
    expect(gate.inFlight).toBe(3);
    for (const t of [...flood, kubelet]) gate.leave(t);
    expect(gate.inFlight).toBe(0);
    expect(gate.enter(['flood'])).toBeDefined();
  });

  it('counts a check under whichever of its waiting callers holds the fewest', () => {
    const gate = new Gate(2);
    gate.enter(['flood']);
    gate.enter(['flood']);
    const ticket = gate.enter(['flood', 'kubelet']);
    expect(ticket?.source).toBe('kubelet');
  });

  it('sets aside at most its limit: then even a small caller waits for a place', () => {
    const gate = new Gate(1);
    gate.enter(['flood']);
    expect(gate.enter(['a'])).toBeDefined();
    expect(gate.enter(['b'])).toBeUndefined();
    expect(gate.inFlight).toBe(2);
  });
});
