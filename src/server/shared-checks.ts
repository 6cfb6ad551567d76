// One check of the app at a time per probe, shared by every request that arrives while it is fresh, so the companion
// amplifies nothing: a flood of valid probe requests reaches the app about 1000 / FRESH_MS times a second per probe
// at most, however many callers send them (docs/security.md#under-load). A request is answered by a check that began
// at most FRESH_MS before it arrived (running or done), else by the next one, begun as soon as none of its probe is
// running; so an answer is never older than the request by more than FRESH_MS, and kubelet, whose shortest period
// is 1 s, always reads its probe's truth. The checks themselves are the caller's (`start`); this only decides
// which requests share which check.

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

/** A request's share of a check: `shared` when another request began it. */
export interface Joined<R> {
  readonly result: Promise<R>;
  readonly shared: boolean;
}

interface Running<R> {
  readonly startedMs: number;
  readonly result: Promise<R>;
  running: boolean;
}

/** The check that begins when the running one ends, and the callers waiting for it. */
interface Queued<C, R> {
  readonly callers: Set<C>;
  /** The first waiting caller's: it begins the check as if that caller had found none running. */
  readonly start: Start<C, R>;
  readonly result: Promise<R>;
  readonly begin: (result: Promise<R>) => void;
}

/** Begins a check for these callers (all waiting for it) and settles with its outcome. */
export type Start<C, R> = (callers: ReadonlySet<C>) => Promise<R>;

interface Slot<C, R> {
  current: Running<R> | undefined;
  next: Queued<C, R> | undefined;
}

/**
 * Checks keyed by probe (`K`: the same key, the same check), begun for callers `C` (whose share `start` may weigh).
 * `start` must settle within its probe's budget; a check's outcome is a value, so it should not reject.
 */
export class SharedChecks<K, C, R> {
  private readonly slots = new Map<K, Slot<C, R>>();

  constructor(
    private readonly freshMs: number = FRESH_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Probes with a check running, queued, or done within the last `freshMs`. */
  get size(): number {
    return this.slots.size;
  }

  join(key: K, caller: C, start: Start<C, R>): Joined<R> {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { current: undefined, next: undefined };
      this.slots.set(key, slot);
    }
    const { current } = slot;
    if (current !== undefined && this.now() - current.startedMs <= this.freshMs) {
      return { result: current.result, shared: true };
    }
    if (current?.running === true) {
      if (slot.next !== undefined) {
        slot.next.callers.add(caller);
        return { result: slot.next.result, shared: true };
      }
      let begin!: (result: Promise<R>) => void;
      const result = new Promise<R>((resolve) => {
        begin = resolve;
      });
      slot.next = { callers: new Set([caller]), start, result, begin };
      return { result, shared: false };
    }
    return { result: this.begin(key, slot, new Set([caller]), start), shared: false };
  }

  private begin(key: K, slot: Slot<C, R>, callers: ReadonlySet<C>, start: Start<C, R>): Promise<R> {
    const startedMs = this.now();
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
        queued.begin(this.begin(key, slot, queued.callers, queued.start));
        return;
      }
      const left = startedMs + this.freshMs - this.now();
      const forget = () => {
        if (slot.current === running && slot.next === undefined) this.slots.delete(key);
      };
      if (left <= 0) forget();
      else setTimeout(forget, left).unref();
    };
    result.then(ended, ended);
    return result;
  }
}
