// Which requests share which check (src/server/shared-checks.ts), on a clock and timers the test moves: one check at
// a time per probe; an answer from a check that began at most FRESH_MS before the request, else from the next one
// if it ends by the request's deadline (its arrival plus as long as the check running then took, at most its
// budget), else at that deadline from the one running when the request arrived; no timer left once a request is
// answered, and nothing kept once a probe's last check is past its window.

import { describe, expect, it } from 'vitest';
import { type Answer, type Clock, FRESH_MS, SharedChecks } from '../../src/server/shared-checks.js';

/** A check the test ends by hand, and the callers it began for. */
interface Began {
  callers: readonly string[];
  at: number;
  end(value: string): void;
}

/** Time that moves only when the test says, with the timers set on it. */
function testClock() {
  let now = 0;
  const timers = new Set<{ at: number; ms: number; fire: () => void }>();
  const clock: Clock = {
    now: () => now,
    after: (ms, fire) => {
      const timer = { at: now + ms, ms, fire };
      timers.add(timer);
      return () => timers.delete(timer);
    },
  };
  return {
    clock,
    /** Timers set and neither fired nor cancelled. */
    pending: () => timers.size,
    /** Those of them set for longer than FRESH_MS: a deadline's, not one that forgets a probe past its window. */
    pendingDeadlines: () => [...timers].filter((t) => t.ms > FRESH_MS).length,
    /** Moves the clock to `ms`, firing each timer due by then in its order, as the event loop would. */
    at: async (ms: number) => {
      for (;;) {
        const due = [...timers].filter((t) => t.at <= ms).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        now = due.at;
        timers.delete(due);
        due.fire();
        await settle();
      }
      now = ms;
      await settle();
    },
  };
}

const BUDGET_MS = 900;

function harness(freshMs = FRESH_MS) {
  const time = testClock();
  const began: Began[] = [];
  const checks = new SharedChecks<string, string, string>(freshMs, time.clock);
  const start = (callers: ReadonlySet<string>) =>
    new Promise<string>((resolve) => {
      began.push({ callers: [...callers], at: time.clock.now(), end: resolve });
    });
  return {
    checks,
    began,
    pending: time.pending,
    pendingDeadlines: time.pendingDeadlines,
    join: (key: string, caller: string) => watch(checks.join(key, caller, BUDGET_MS, start)),
    at: time.at,
    /** Ends the `i`th check begun with `value`, and lets what follows run. */
    end: async (i: number, value: string) => {
      began[i]?.end(value);
      await settle();
    },
  };
}

/** A request's answer, readable as soon as it has come. */
function watch(result: Promise<Answer<string>>) {
  const seen: { answer: Answer<string> | undefined; result: Promise<Answer<string>> } = {
    answer: undefined,
    result,
  };
  result.then((answer) => {
    seen.answer = answer;
  });
  return seen;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('SharedChecks', () => {
  it('lets requests within FRESH_MS of a running check share it, and begins none beside it', async () => {
    const h = harness();
    const first = h.join('live', 'kubelet');
    await h.at(FRESH_MS);
    const second = h.join('live', 'flood');
    expect(h.began).toHaveLength(1);
    await h.end(0, 'ok');
    expect([first.answer, second.answer]).toEqual([
      { value: 'ok', by: 'own' },
      { value: 'ok', by: 'shared' },
    ]);
  });

  it('queues requests that come later than FRESH_MS into the run of one next check, begun when the running one ends', async () => {
    const h = harness();
    const first = h.join('live', 'flood');
    await h.at(FRESH_MS + 1);
    const late = h.join('live', 'kubelet');
    const later = h.join('live', 'flood');
    expect(h.began).toHaveLength(1);
    await h.at(700);
    await h.end(0, 'old');
    expect(first.answer).toEqual({ value: 'old', by: 'own' });
    // The next check began after both late requests arrived, for both of their callers.
    expect(h.began).toHaveLength(2);
    expect(h.began[1]).toMatchObject({ at: 700, callers: ['kubelet', 'flood'] });
    expect([late.answer, later.answer]).toEqual([undefined, undefined]);
    await h.end(1, 'new');
    expect([late.answer, later.answer]).toEqual([
      { value: 'new', by: 'own' },
      { value: 'new', by: 'shared' },
    ]);
  });

  // One check runs from 0 to `runningEnds`; the request arrives at `arrives` (past FRESH_MS, so it waits for the
  // next check, which runs from `runningEnds` to `nextEnds`); its deadline is `arrives` + `runningEnds` (as long as
  // the running check took), at most `arrives` + BUDGET_MS.
  it.each([
    {
      name: 'the next check, ending before the deadline',
      arrives: 350,
      runningEnds: 600,
      nextEnds: 900,
      answer: { value: 'next', by: 'own' },
      at: 900,
    },
    {
      name: 'the next check, on a fast probe',
      arrives: 150,
      runningEnds: 200,
      nextEnds: 260,
      answer: { value: 'next', by: 'own' },
      at: 260,
    },
    {
      name: 'the running check at the deadline, the next ending after it',
      arrives: 150,
      runningEnds: 600,
      nextEnds: 1200,
      answer: { value: 'running', by: 'running' },
      at: 750,
    },
    {
      name: 'the running check at the deadline, the next never ending',
      arrives: 890,
      runningEnds: 895,
      nextEnds: Number.POSITIVE_INFINITY,
      answer: { value: 'running', by: 'running' },
      at: 1785,
    },
    {
      name: 'the running check as it ends, past the budget it overran',
      arrives: 150,
      runningEnds: 1200,
      nextEnds: 1300,
      answer: { value: 'running', by: 'running' },
      at: 1200,
    },
  ])('answers a request that waits with $name', async (row) => {
    const h = harness();
    const flood = h.join('live', 'flood');
    await h.at(row.arrives);
    const request = h.join('live', 'kubelet');
    // No timer while the running check runs: a deadline is set once it has ended.
    expect(h.pending()).toBe(0);
    await h.at(row.runningEnds);
    await h.end(0, 'running');
    expect(flood.answer?.value).toBe('running');
    expect(h.began).toHaveLength(2);
    let answeredAt = request.answer === undefined ? undefined : row.runningEnds;
    for (
      let ms = row.runningEnds + 1;
      answeredAt === undefined && ms <= row.runningEnds + 2 * BUDGET_MS;
      ms++
    ) {
      await h.at(ms);
      if (ms === row.nextEnds) await h.end(1, 'next');
      if (request.answer !== undefined) answeredAt = ms;
    }
    expect({ answer: request.answer, at: answeredAt }).toEqual({ answer: row.answer, at: row.at });
    // The deadline's timer is gone, fired or cancelled.
    expect(h.pendingDeadlines()).toBe(0);
    // The next check ending later changes nothing: the request had its one answer.
    if (Number.isFinite(row.nextEnds) && row.nextEnds > row.at) {
      await h.at(row.nextEnds);
      await h.end(1, 'next');
    }
    expect(request.answer).toEqual(row.answer);
    expect(h.began).toHaveLength(2);
  });

  it('answers each waiter by its own deadline: the early ones from the running check, the later ones from the next, with one timer at a time', async () => {
    const h = harness();
    h.join('live', 'flood');
    const arrivals = [150, 200, 300, 400];
    const waiting: ReturnType<typeof h.join>[] = [];
    for (const ms of arrivals) {
      await h.at(ms);
      waiting.push(h.join('live', `caller${ms}`));
    }
    expect(h.pending()).toBe(0);
    await h.at(600);
    await h.end(0, 'running');
    expect(h.pending()).toBe(1);
    // Deadlines 750, 800, 900, 1000 (the running check took 600 ms); the next check ends at 850.
    await h.at(800);
    expect(waiting.map((w) => w.answer?.by)).toEqual(['running', 'running', undefined, undefined]);
    expect(h.pending()).toBe(1);
    await h.at(850);
    await h.end(1, 'next');
    expect(waiting.map((w) => w.answer)).toEqual([
      { value: 'running', by: 'running' },
      { value: 'running', by: 'running' },
      { value: 'next', by: 'shared' },
      { value: 'next', by: 'shared' },
    ]);
    expect(h.pending()).toBe(0);
    expect(h.began).toHaveLength(2);
  });

  it('holds one check at a time when waiters are answered at their deadlines: the check after next begins only when next ends', async () => {
    const h = harness();
    h.join('live', 'flood');
    await h.at(150);
    const early = h.join('live', 'kubelet');
    await h.at(600);
    await h.end(0, 'first');
    await h.at(750);
    expect(early.answer).toEqual({ value: 'first', by: 'running' });
    // While the second check runs, more requests wait for a third.
    await h.at(800);
    const third = h.join('live', 'flood');
    expect(h.began).toHaveLength(2);
    await h.at(1300);
    await h.end(1, 'second');
    expect(h.began).toHaveLength(3);
    expect(h.began[2]?.at).toBe(1300);
    expect(third.answer).toBeUndefined();
    await h.at(1450);
    await h.end(2, 'third');
    expect(third.answer).toEqual({ value: 'third', by: 'own' });
    expect(h.pending()).toBe(0);
  });

  it('answers from a finished check only within FRESH_MS of its start, then begins a new one', async () => {
    const h = harness();
    h.join('live', 'a');
    await h.at(5);
    await h.end(0, 'ok');
    await h.at(FRESH_MS - 1);
    const shared = h.join('live', 'b');
    await settle();
    expect(shared.answer).toEqual({ value: 'ok', by: 'shared' });
    expect(h.began).toHaveLength(1);
    await h.at(FRESH_MS + 1);
    h.join('live', 'b');
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
      await h.at(ms);
      for (const check of h.began.filter((b) => b.at === ms - 3)) check.end('ok');
      await settle();
      for (let i = 0; i < 10; i++) h.join('live', `flood${i}`);
    }
    expect(h.began.length).toBeGreaterThanOrEqual(2000 / (FRESH_MS + 1));
    expect(h.began.length).toBeLessThanOrEqual(2000 / FRESH_MS + 1);
  });

  it("under a flood of a slow probe, begins one check at a time, each after the last, and answers every request within a check's duration", async () => {
    const h = harness();
    const CHECK_MS = 600;
    const requests: { arrived: number; seen: ReturnType<typeof h.join> }[] = [];
    let answeredLate = 0;
    // A request every 10 ms for 5 s; each check takes 600 ms (two thirds of the budget).
    const ended = new Set<number>();
    for (let ms = 0; ms < 5000; ms += 10) {
      // Each check ends CHECK_MS after it began, at that moment; the next one, if any waits, begins then.
      for (;;) {
        const last = h.began.length - 1;
        const running = h.began[last];
        if (running === undefined || ended.has(last) || running.at + CHECK_MS > ms) break;
        await h.at(running.at + CHECK_MS);
        ended.add(last);
        await h.end(last, `check@${running.at}`);
      }
      await h.at(ms);
      for (const r of requests) {
        if (r.seen.answer === undefined && ms > r.arrived + CHECK_MS) answeredLate++;
      }
      requests.push({ arrived: ms, seen: h.join('live', 'flood') });
    }
    expect(answeredLate).toBe(0);
    const starts = h.began.map((b) => b.at);
    expect(starts.every((at, i) => i === 0 || at - (starts[i - 1] as number) >= CHECK_MS)).toBe(true);
    expect(h.began.length).toBeLessThanOrEqual(5000 / CHECK_MS + 1);
    expect(requests.some((r) => r.seen.answer?.by === 'running')).toBe(true);
  });

  it('never keeps the process alive for a waiting request, and answers it at its deadline on the real clock', async () => {
    const checks = new SharedChecks<string, string, string>(0);
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    let endRunning!: (value: string) => void;
    checks.join('live', 'flood', BUDGET_MS, () => new Promise<string>((resolve) => (endRunning = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const waiting = checks.join('live', 'kubelet', BUDGET_MS, () => new Promise<string>(() => {}));
    const before = timeouts();
    endRunning('running');
    await Promise.resolve();
    await Promise.resolve();
    // The deadline's timer (about 200 ms from now) is set, and unref'd: node's active resources hold no more timers.
    expect(timeouts()).toBe(before);
    expect(await waiting).toEqual({ value: 'running', by: 'running' });
  });

  it('forgets a probe once its last check is past its window, and hands a check that throws to its callers', async () => {
    const checks = new SharedChecks<string, string, string>(1);
    const done = checks.join('live', 'a', BUDGET_MS, async () => 'ok');
    expect(await done).toEqual({ value: 'ok', by: 'own' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(checks.size).toBe(0);
    const thrown = checks.join('ready', 'a', BUDGET_MS, () => {
      throw new Error('prober bug');
    });
    await expect(thrown).rejects.toThrow('prober bug');
  });
});
