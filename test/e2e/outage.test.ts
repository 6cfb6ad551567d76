// The outage arithmetic the companion-failure tests judge by: spans of failure, and the worst run of failures a
// kubelet ticker of a given period could have counted.

import { describe, expect, it } from 'vitest';
import { outages, type Point, worstConsecutiveFailures } from './outage.js';

/** Points every `every` ms from 0, failing where `bad(t)`. */
const points = (until: number, every: number, bad: (t: number) => boolean): Point[] =>
  Array.from({ length: Math.floor(until / every) + 1 }, (_, i) => ({ at: i * every, ok: !bad(i * every) }));

describe('outages', () => {
  it.each([
    { name: 'never failed', pts: points(1000, 100, () => false), want: [] },
    {
      name: 'one span',
      pts: points(1000, 100, (t) => t >= 300 && t < 500),
      want: [{ from: 300, to: 500 }],
    },
    {
      name: 'two spans, the last still open',
      pts: points(1000, 100, (t) => t === 200 || t >= 900),
      want: [
        { from: 200, to: 300 },
        { from: 900, to: 1000 },
      ],
    },
  ])('$name', ({ pts, want }) => {
    expect(outages(pts)).toEqual(want);
  });
});

describe('worstConsecutiveFailures', () => {
  it.each([
    { name: 'no failure', pts: points(60_000, 50, () => false), period: 10_000, want: 0 },
    {
      name: 'a 0.5 s gap: one probe at most',
      pts: points(60_000, 50, (t) => t >= 20_000 && t < 20_500),
      period: 10_000,
      want: 1,
    },
    {
      name: 'a 12 s gap: two probes at the worst phase',
      pts: points(60_000, 50, (t) => t >= 20_000 && t < 32_000),
      period: 10_000,
      want: 2,
    },
    {
      name: 'a 25 s gap: three, a restart',
      pts: points(60_000, 50, (t) => t >= 20_000 && t < 45_000),
      period: 10_000,
      want: 3,
    },
    {
      name: 'two short gaps one period apart: a ticker can hit both, two in a row',
      pts: points(60_000, 50, (t) => (t >= 20_000 && t < 20_500) || (t >= 29_800 && t < 30_300)),
      period: 10_000,
      want: 2,
    },
    {
      name: 'a 3 s gap under a 1 s period',
      pts: points(10_000, 50, (t) => t >= 2_000 && t < 5_000),
      period: 1_000,
      want: 3,
    },
  ])('$name', ({ pts, period, want }) => {
    expect(worstConsecutiveFailures(pts, period)).toBe(want);
  });
});
