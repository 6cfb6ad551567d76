// LineBudget: the per-second cap on probe-failure lines, driven by explicit times.

import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import { budgetedWarn, LineBudget } from '../../src/server/line-budget.js';

describe('LineBudget', () => {
  it.each([
    { name: 'under the cap', perSecond: 3, times: [0, 10, 20], taken: [true, true, true], refused: 0 },
    {
      name: 'past the cap',
      perSecond: 2,
      times: [0, 1, 2, 3],
      taken: [true, true, false, false],
      refused: 2,
    },
    {
      name: 'a new second starts a new window',
      perSecond: 1,
      times: [0, 500, 1000, 1500, 2600],
      taken: [true, false, true, false, true],
      refused: 2,
    },
    {
      name: 'kubelet-paced lines never hit a cap of one',
      perSecond: 1,
      times: [0, 1000, 2000, 3000],
      taken: [true, true, true, true],
      refused: 0,
    },
  ])('$name', ({ perSecond, times, taken, refused }) => {
    const budget = new LineBudget(perSecond);
    expect(times.map((t) => budget.take(t))).toEqual(taken);
    expect(budget.drain()).toBe(refused);
    expect(budget.drain()).toBe(0);
  });
});

describe('budgetedWarn', () => {
  afterEach(() => vi.useRealTimers());

  it('writes a line per failure within the budget, then one summary a second of what it did not write', () => {
    vi.useFakeTimers();
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    const warn = budgetedWarn(createLogger('info', sink), 2);
    let built = 0;
    const fields = () => {
      built++;
      return { kind: 'liveness', container: 'app' };
    };
    for (let i = 0; i < 5; i++) warn(fields, `reason ${i}`, 'probe failed');
    expect(lines.map((l) => l.reason)).toEqual(['reason 0', 'reason 1']);
    expect(built).toBe(2);
    vi.advanceTimersByTime(1000);
    expect(lines.at(-1)).toMatchObject({
      notLogged: 3,
      perSecond: 2,
      msg: 'probe failures over the log budget not logged',
    });
    warn(fields, 'reason 5', 'probe failed');
    expect(lines.at(-1)).toMatchObject({ reason: 'reason 5', kind: 'liveness' });
  });
});
