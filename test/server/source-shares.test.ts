// Fair shares by caller address (src/server/source-shares.ts), as tables: who is admitted past the capacity, whose
// item is evicted, and that the counts stay right through adds, deletes and evictions.

import { describe, expect, it } from 'vitest';
import { SourceShares, sourceOf } from '../../src/server/source-shares.js';

/** Plays `steps` (`+a` adds an item from a, `-a` deletes a's oldest) and says what each add came to. */
function play(capacity: number, steps: readonly string[]) {
  const shares = new SourceShares<string>(capacity);
  const held = new Map<string, string[]>();
  let n = 0;
  const outcomes: string[] = [];
  for (const step of steps) {
    const source = step.slice(1);
    if (step.startsWith('-')) {
      const item = held.get(source)?.shift();
      if (item !== undefined) shares.delete(source, item);
      continue;
    }
    const item = `${source}${n++}`;
    const admission = shares.add(source, item);
    if (!admission.admitted) {
      outcomes.push(`${item} refused`);
      continue;
    }
    held.set(source, [...(held.get(source) ?? []), item]);
    if (admission.evicted === undefined) {
      outcomes.push(`${item} in`);
      continue;
    }
    const victims = held.get(admission.evictedSource) ?? [];
    held.set(
      admission.evictedSource,
      victims.filter((v) => v !== admission.evicted),
    );
    outcomes.push(`${item} in, ${admission.evicted} out`);
  }
  return { shares, outcomes };
}

describe('SourceShares', () => {
  it.each([
    {
      name: 'under the capacity, everyone is in',
      capacity: 3,
      steps: ['+a', '+a', '+b'],
      want: ['a0 in', 'a1 in', 'b2 in'],
    },
    {
      name: "at it, a caller holding fewer takes the place of the biggest holder's oldest",
      capacity: 3,
      steps: ['+a', '+a', '+a', '+k'],
      want: ['a0 in', 'a1 in', 'a2 in', 'k3 in, a0 out'],
    },
    {
      name: 'at it, the biggest holder is refused',
      capacity: 3,
      steps: ['+a', '+a', '+a', '+a'],
      want: ['a0 in', 'a1 in', 'a2 in', 'a3 refused'],
    },
    {
      name: 'kubelet gets in again and again while the flooder holds the rest',
      capacity: 4,
      steps: ['+a', '+a', '+a', '+a', '+k', '-k', '+a', '+k', '-k', '+a', '+k'],
      want: [
        'a0 in',
        'a1 in',
        'a2 in',
        'a3 in',
        'k4 in, a0 out',
        'a5 in',
        'k6 in, a1 out',
        'a7 in',
        'k8 in, a2 out',
      ],
    },
    {
      name: 'an equal holder is refused: no churn between equals',
      capacity: 4,
      steps: ['+a', '+a', '+b', '+b', '+a', '+b'],
      want: ['a0 in', 'a1 in', 'b2 in', 'b3 in', 'a4 refused', 'b5 refused'],
    },
    {
      name: 'one more than the newcomer is enough to give way',
      capacity: 3,
      steps: ['+a', '+a', '+b', '+b'],
      want: ['a0 in', 'a1 in', 'b2 in', 'b3 in, a0 out'],
    },
    {
      name: 'with every caller at one, a new one still gets in',
      capacity: 3,
      steps: ['+a', '+b', '+c', '+k'],
      want: ['a0 in', 'b1 in', 'c2 in', 'k3 in, a0 out'],
    },
    {
      name: "a freed place is anyone's",
      capacity: 2,
      steps: ['+a', '+a', '-a', '+a'],
      want: ['a0 in', 'a1 in', 'a2 in'],
    },
  ])('$name', ({ capacity, steps, want }) => {
    expect(play(capacity, steps).outcomes).toEqual(want);
  });

  it('keeps its counts through thousands of adds, deletes and evictions (the biggest holder found in O(1))', () => {
    const shares = new SourceShares<number>(64);
    const live = new Map<number, string>();
    for (let i = 0; i < 10_000; i++) {
      const source = `s${(i * 7919) % 13}`;
      const admission = shares.add(source, i);
      if (admission.admitted) live.set(i, source);
      if (admission.admitted && admission.evicted !== undefined) live.delete(admission.evicted);
      if (i % 3 === 0) {
        const [oldest] = live;
        if (oldest !== undefined) {
          shares.delete(oldest[1], oldest[0]);
          live.delete(oldest[0]);
        }
      }
      expect(shares.size).toBe(live.size);
    }
    const bySource = new Map<string, number>();
    for (const source of live.values()) bySource.set(source, (bySource.get(source) ?? 0) + 1);
    for (const [source, n] of bySource) expect(shares.held(source)).toBe(n);
    expect(shares.sources).toBe(bySource.size);
    expect(shares.size).toBeLessThanOrEqual(64);
  });

  it('ignores deleting what it does not hold, and refuses a capacity below 1', () => {
    const shares = new SourceShares<string>(1);
    shares.delete('a', 'x');
    expect(shares.add('a', 'x')).toEqual({ admitted: true, evicted: undefined });
    shares.delete('b', 'x');
    expect(shares.size).toBe(1);
    expect(() => new SourceShares(0)).toThrow(/capacity must be an integer >= 1, got 0/);
  });
});

describe('sourceOf', () => {
  it.each([
    ['10.1.2.3', '10.1.2.3'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['fd00::1', 'fd00::1'],
    ['::ffff:abcd', '::ffff:abcd'],
    [undefined, ''],
  ])('%s counts as %j', (address, source) => {
    expect(sourceOf(address)).toBe(source);
  });
});
