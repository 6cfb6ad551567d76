// LineBudget: the per-second cap on probe-failure lines, driven by explicit times.

import { describe, expect, it } from 'vitest';
import { LineBudget } from '../../src/server/line-budget.js';

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
