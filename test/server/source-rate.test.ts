// New connections a second per caller address (src/server/source-rate.ts), on a clock the test moves: a burst, then
// the rate; each address its own bucket; idle ones forgotten once full again.

import { describe, expect, it } from 'vitest';
import { CONNECTION_RATE, SourceRate } from '../../src/server/source-rate.js';

function rate(perSecond: number, burst: number) {
  let now = 0;
  const limiter = new SourceRate(perSecond, burst, () => now);
  return {
    limiter,
    at: (ms: number) => {
      now = ms;
    },
    takes: (source: string, n: number) =>
      Array.from({ length: n }, () => limiter.take(source)).filter(Boolean).length,
  };
}

describe('SourceRate', () => {
  it('grants a burst at once, then the rate', () => {
    const r = rate(50, 20);
    expect(r.takes('flood', 30)).toBe(20);
    r.at(100);
    expect(r.takes('flood', 30)).toBe(5);
    r.at(10_000);
    expect(r.takes('flood', 30)).toBe(20);
  });

  it("keeps each address's bucket apart: kubelet's connections pass while a flooder's are shed", () => {
    const r = rate(CONNECTION_RATE.perSecond, CONNECTION_RATE.burst);
    for (let ms = 0; ms < 10_000; ms += 10) {
      r.at(ms);
      r.takes('flood', 100);
      if (ms % 1000 === 0) expect(r.limiter.take('kubelet')).toBe(true);
    }
    r.at(10_000);
    // 10 s of the flood got the burst and the rate, no more.
    const r2 = rate(CONNECTION_RATE.perSecond, CONNECTION_RATE.burst);
    let granted = 0;
    for (let ms = 0; ms < 10_000; ms += 10) {
      r2.at(ms);
      granted += r2.takes('flood', 100);
    }
    expect(granted).toBeLessThanOrEqual(CONNECTION_RATE.burst + 10 * CONNECTION_RATE.perSecond);
    expect(granted).toBeGreaterThanOrEqual(10 * CONNECTION_RATE.perSecond);
  });

  it('forgets idle addresses once their bucket is full again, and refuses a rate that is none', () => {
    const r = rate(50, 20);
    for (let i = 0; i < 5000; i++) r.limiter.take(`10.0.${i >> 8}.${i & 255}`);
    expect(r.limiter.size).toBe(5000);
    r.at(1000);
    r.limiter.take('fresh');
    expect(r.limiter.size).toBeLessThan(10);
    expect(() => new SourceRate(0, 1)).toThrow(/perSecond must be > 0 and burst >= 1, got 0 and 1/);
  });
});
