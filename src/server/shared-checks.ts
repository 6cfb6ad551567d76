// One check of the app at a time per probe, shared by every request that arrives while it is fresh, so the companion
// amplifies nothing: a flood of valid probe requests reaches the app about 1000 / FRESH_MS times a second per probe
// at most, however many callers send them (docs/security.md#under-load). A request is answered
//   1. by a check that began at most FRESH_MS before it arrived (running or done); else, the check then running
//      being older,
//   2. by the next check, begun when that one ends, if the next ends by the request's deadline; else
//   3. at its deadline, by the check that was running when it arrived.
// The deadline is the request's arrival plus as long as the check running at its arrival took (at most its probe's
// budget): the time the request's own check would have taken, had the app answered it as fast as the last one.
// Without the third way a flood had a lever on a slow probe: it keeps one check running at all times, and a request
// that came more than FRESH_MS into it waited for its end and the whole next check, past kubelet's timeout whenever
// a check takes more than about half of it. With it, the flood adds nothing to kubelet's wait beyond the check's
// own duration. Why the third answer is still kubelet's: that check was running when the request arrived, so its
// verdict (the app's answer, or its failure to answer) came in after the request arrived and before its deadline,
// as kubelet's own check's would; the app began it before the request, by less than its duration (at most the
// budget); and it began after the check that answered kubelet's previous probe had ended (kubelet waits for its
// answer, then a period of at least 1 s), so kubelet never reads one check twice nor an older one after a newer.
// Why not wait to the budget's end for the next check: the answer then comes at 90% of kubelet's timeout, the hop
// back has only the budget's margin, and the flood's own load takes it (measured: 1 probe in 19 failed at
// 1,020 ms); the next check wins only where it is as fast as the lateness it must make up. Nothing better exists
// within one check at a time: a check begun for the request itself could end no sooner than the next does; a second
// check beside the running one would double the load on an app already slow; cutting the running check short
// would let a flood cut every check; guessing at arrival whether the next will be in time fails kubelet whenever
// the guess is wrong. The checks themselves are the caller's (`start`); this only decides which requests share
// which check and when each is answered.

import { badFlagValue } from '../flags.js';

/** How old a check may be, at a request's arrival, to answer it: the default and the most serve takes. */
export const FRESH_MS = 100;

/**
 * `--shared-check-window`: whole milliseconds, 0 to FRESH_MS. Shorter windows are for a clock that runs faster
 * than kubelet's (the end-to-end tests play a kubelet second in 100 ms); 0 still keeps one check at a time.
 */
export function parseSharedCheckWindow(text: string, field: string): number {
  const ms = Number(text);
  if (!/^\d+$/.test(text) || ms > FRESH_MS) {
    throw badFlagValue(field, text, `whole milliseconds, 0 to ${FRESH_MS}`);
  }
  return ms;
}

/** The time a SharedChecks reads and the timers it sets on it: real by default, the test's own in the tables. */
export interface Clock {
  now(): number;
  /** Calls `fire` in `ms` without keeping the process alive; the function returned cancels it. */
  after(ms: number, fire: () => void): () => void;
}

const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  after: (ms, fire) => {
    const timer = setTimeout(fire, ms);
    // A timer of a check is never a reason to stay up: shutdown.ts decides when serve ends.
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * Which check answered a request: the one it began (`own`), one another request began that was fresh at its
 * arrival or the next one (`shared`), or, at its deadline, the one running when it arrived (`running`).
 */
export type AnsweredBy = 'own' | 'shared' | 'running';

export interface Answer<R> {
  readonly value: R;
  readonly by: AnsweredBy;
}

interface Running<R> {
  readonly startedMs: number;
  readonly result: Promise<R>;
  running: boolean;
}

/** A request waiting for the next check, answered by the running one at its deadline if the next is late. */
interface Waiter<R> {
  readonly arrivedMs: number;
  readonly budgetMs: number;
  readonly by: 'own' | 'shared';
  readonly answer: (answer: Promise<Answer<R>>) => void;
}

/** Where a waiting request's answer comes from once the check running at its arrival has ended. */
interface Due<R> {
  readonly deadlineMs: number;
  readonly waiter: Waiter<R>;
}

/** The check that begins when the running one ends, and the requests waiting for it. */
interface Queued<C, R> {
  readonly callers: Set<C>;
  /** The first waiting caller's: it begins the check as if that caller had found none running. */
  readonly start: Start<C, R>;
  /** In arrival order; their deadlines are known once the running check has ended. */
  readonly waiters: Waiter<R>[];
}

/** Begins a check for these callers (all waiting for it) and settles with its outcome. */
export type Start<C, R> = (callers: ReadonlySet<C>) => Promise<R>;

interface Slot<C, R> {
  current: Running<R> | undefined;
  next: Queued<C, R> | undefined;
}

const answered = <R>(result: Promise<R>, by: AnsweredBy): Promise<Answer<R>> =>
  result.then((value) => ({ value, by }));

/**
 * Checks keyed by probe (`K`: the same key, the same check), begun for callers `C` (whose share `start` may weigh).
 * `start` should settle within its probe's budget, the `budgetMs` every request for that key gives `join` (a check
 * that overruns it answers its waiters when it ends); a check's outcome is a value, so it should not reject.
 */
export class SharedChecks<K, C, R> {
  private readonly slots = new Map<K, Slot<C, R>>();

  constructor(
    private readonly freshMs: number = FRESH_MS,
    private readonly clock: Clock = REAL_CLOCK,
  ) {}

  /** Probes with a check running, queued, or done within the last `freshMs`. */
  get size(): number {
    return this.slots.size;
  }

  /** The answer for a request for `key` arriving now, due `budgetMs` from now at the latest. */
  join(key: K, caller: C, budgetMs: number, start: Start<C, R>): Promise<Answer<R>> {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { current: undefined, next: undefined };
      this.slots.set(key, slot);
    }
    const { current } = slot;
    const now = this.clock.now();
    if (current !== undefined && now - current.startedMs <= this.freshMs) {
      return answered(current.result, 'shared');
    }
    if (current?.running === true) return this.wait(slot, caller, now, budgetMs, start);
    return answered(this.begin(key, slot, new Set([caller]), start), 'own');
  }

  private wait(
    slot: Slot<C, R>,
    caller: C,
    arrivedMs: number,
    budgetMs: number,
    start: Start<C, R>,
  ): Promise<Answer<R>> {
    let queued = slot.next;
    const by = queued === undefined ? 'own' : 'shared';
    if (queued === undefined) {
      queued = { callers: new Set(), start, waiters: [] };
      slot.next = queued;
    }
    queued.callers.add(caller);
    const { waiters } = queued;
    return new Promise<Answer<R>>((answer) => {
      waiters.push({ arrivedMs, budgetMs, by, answer });
    });
  }

  /**
   * The running check (`earlier`, begun at `startedMs`) has ended and `next` has begun: each waiter is answered by
   * `next` if it ends by the waiter's deadline, else by `earlier` then. One timer, for the soonest deadline, at a time.
   */
  private follow(queued: Queued<C, R>, earlier: Promise<R>, startedMs: number, next: Promise<R>): void {
    const now = this.clock.now();
    const tookMs = now - startedMs;
    const pending: Due<R>[] = queued.waiters
      .map((waiter) => ({ deadlineMs: waiter.arrivedMs + Math.min(tookMs, waiter.budgetMs), waiter }))
      .sort((a, b) => a.deadlineMs - b.deadlineMs);
    let cancel: (() => void) | undefined;
    const answerDue = () => {
      cancel = undefined;
      const at = this.clock.now();
      let due = 0;
      while (due < pending.length && (pending[due] as Due<R>).deadlineMs <= at) due++;
      for (const { waiter } of pending.splice(0, due)) waiter.answer(answered(earlier, 'running'));
      const first = pending[0];
      if (first !== undefined) cancel = this.clock.after(first.deadlineMs - at, answerDue);
    };
    answerDue();
    const settled = () => {
      cancel?.();
      cancel = undefined;
      for (const { waiter } of pending.splice(0)) waiter.answer(answered(next, waiter.by));
    };
    next.then(settled, settled);
  }

  private begin(key: K, slot: Slot<C, R>, callers: ReadonlySet<C>, start: Start<C, R>): Promise<R> {
    const startedMs = this.clock.now();
    let result: Promise<R>;
    try {
      result = start(callers);
    } catch (err) {
      result = Promise.reject(err);
    }
    const running: Running<R> = { startedMs, result, running: true };
    slot.current = running;
    const ended = () => {
      running.running = false;
      const queued = slot.next;
      if (queued !== undefined) {
        slot.next = undefined;
        this.follow(queued, result, startedMs, this.begin(key, slot, queued.callers, queued.start));
        return;
      }
      const left = startedMs + this.freshMs - this.clock.now();
      const forget = () => {
        if (slot.current === running && slot.next === undefined) this.slots.delete(key);
      };
      if (left <= 0) forget();
      else this.clock.after(left, forget);
    };
    result.then(ended, ended);
    return result;
  }
}
