// Caps how many probe-failure lines a flood can write. kubelet's own probes (one per probe per period, a period
// being >= 1 s) stay far below the cap, so each of their failures is still logged; past it, lines are counted
// instead and summed up once a second. Time is passed in, so the rule is table-tested without a clock.

import type { Logger } from '../log.js';

export class LineBudget {
  readonly perSecond: number;
  private windowStart = Number.NEGATIVE_INFINITY;
  private used = 0;
  private refused = 0;

  constructor(perSecond: number) {
    this.perSecond = perSecond;
  }

  /** Whether a line may be written at `nowMs`: at most `perSecond` in any window of one second. */
  take(nowMs: number): boolean {
    if (nowMs - this.windowStart >= 1000) {
      this.windowStart = nowMs;
      this.used = 0;
    }
    if (this.used < this.perSecond) {
      this.used++;
      return true;
    }
    this.refused++;
    return false;
  }

  /** How many lines were refused since the last call. */
  drain(): number {
    const refused = this.refused;
    this.refused = 0;
    return refused;
  }
}

/**
 * A warn line per probe failure while the budget lasts; past it, the failures are counted and one line a second
 * says how many were not logged. `fields` is only called for a line that is written.
 */
export function budgetedWarn(
  log: Logger,
  perSecond: number,
): (fields: () => Record<string, unknown>, reason: string, msg: string) => void {
  const budget = new LineBudget(perSecond);
  let summaryDue = false;
  return (fields, reason, msg) => {
    if (budget.take(Date.now())) {
      log.warn({ ...fields(), reason }, msg);
      return;
    }
    if (summaryDue) return;
    summaryDue = true;
    setTimeout(() => {
      summaryDue = false;
      log.warn({ notLogged: budget.drain(), perSecond }, 'probe failures over the log budget not logged');
    }, 1000).unref();
  };
}
