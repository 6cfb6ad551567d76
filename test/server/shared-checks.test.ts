// Which requests share which check (src/server/shared-checks.ts), on a clock the test moves: one check at a time
// per probe, an answer never from a check that began more than FRESH_MS before the request, and nothing kept
// once a probe's last check is past its window.

import { describe, expect, it } from 'vitest';
import { FRESH_MS, SharedChecks } from '../../src/server/shared-checks.js';

/** A check the test ends by hand, and the callers it began for. */
interface Began {
  callers: readonly string[];
  at: number;
  end(value: string): void;
}

function harness() {
  let now = 0;
  const began: Began[] = [];
  const checks = new SharedChecks<string, string, string>(FRESH_MS, () => now);
  const start = (callers: ReadonlySet<string>) =>
    new Promise<string>((resolve) => {
      began.push({ callers: [...callers], at: now, end: resolve });
    });
  return {
    checks,
    began,
    join: (key: string, caller: string) => checks.join(key, caller, start),
    at: (ms: number) => {
      now = ms;
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('SharedChecks', () => {
  it('lets requests within FRESH_MS of a running check share it, and begins none beside it', async () => {
    const h = harness();
    const first = h.join('live', 'kubelet');
    h.at(FRESH_MS);
    const second = h.join('live', 'flood');
    expect(h.began).toHaveLength(1);
    expect([first.shared, second.shared]).toEqual([false, true]);
    h.began[0]?.end('ok');
    expect([await first.result, await second.result]).toEqual(['ok', 'ok']);
  });

  it('queues a request that comes later than FRESH_MS into the run of one next check, begun when the running one ends', async () => {
    const h = harness();
    const first = h.join('live', 'flood');
    h.at(FRESH_MS + 1);
    const late = h.join('live', 'kubelet');
    const later = h.join('live', 'flood');
    expect(h.began).toHaveLength(1);
    expect([late.shared, later.shared]).toEqual([false, true]);
    h.at(700);
    h.began[0]?.end('old');
    expect(await first.result).toBe('old');
    await settle();
    // The next check began after both late requests arrived, for both of their callers.
    expect(h.began).toHaveLength(2);
    expect(h.began[1]).toMatchObject({ at: 700, callers: ['kubelet', 'flood'] });
    h.began[1]?.end('new');
    expect([await late.result, await later.result]).toEqual(['new', 'new']);
  });

  it('answers from a finished check only within FRESH_MS of its start, then begins a new one', async () => {
    const h = harness();
    const first = h.join('live', 'a');
    h.at(5);
    h.began[0]?.end('ok');
    await first.result;
    await settle();
    h.at(FRESH_MS);
    expect(h.join('live', 'b').shared).toBe(true);
    h.at(FRESH_MS + 1);
    const fresh = h.join('live', 'b');
    expect(fresh.shared).toBe(false);
    expect(h.began).toHaveLength(2);
  });

  it('keeps probes apart: one check each', () => {
    const h = harness();
    h.join('live', 'a');
    h.join('ready', 'a');
    h.join('live', 'a');
    expect(h.began).toHaveLength(2);
  });

  it('under a flood, begins about one check per FRESH_MS however many requests arrive', async () => {
    const h = harness();
    // 10 requests a millisecond for 2 s; each check takes 3 ms.
    for (let ms = 0; ms < 2000; ms++) {
      h.at(ms);
      for (const check of h.began.filter((b) => b.at === ms - 3)) check.end('ok');
      await settle();
      for (let i = 0; i < 10; i++) h.join('live', `flood${i}`);
    }
    expect(h.began.length).toBeGreaterThanOrEqual(2000 / (FRESH_MS + 1));
    expect(h.began.length).toBeLessThanOrEqual(2000 / FRESH_MS + 1);
  });

  it('forgets a probe once its last check is past its window, and hands a check that throws to its callers', async () => {
    const checks = new SharedChecks<string, string, string>(1);
    const done = checks.join('live', 'a', async () => 'ok');
    expect(await done.result).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(checks.size).toBe(0);
    const thrown = checks.join('ready', 'a', () => {
      throw new Error('prober bug');
    });
    await expect(thrown.result).rejects.toThrow('prober bug');
  });
});
