// When `wait` asks the companion again, and when it gives up: pure, on elapsed milliseconds, so the schedule is
// tested without a clock. The HTTP call is healthz.ts; the loop that joins the two is commands/wait.ts.

export interface WaitPlan {
  /** Give up once this long has passed since the wait began. */
  timeoutMs: number;
  /** From the start of one attempt to the start of the next. */
  intervalMs: number;
  /** One attempt's own limit: a companion that accepts and never answers must not use up the whole wait. */
  attemptTimeoutMs: number;
}

/**
 * Istio's `pilot-agent wait` (holdApplicationUntilProxyStarts) polls every 500 ms for 60 s, 500 ms a request.
 * The companion listens about 0.2 s after it starts, and every 100 ms of polling is start-up the app waits for.
 */
export const DEFAULT_PLAN: WaitPlan = { timeoutMs: 60_000, intervalMs: 100, attemptTimeoutMs: 1_000 };

export type Step =
  | { action: 'attempt'; timeoutMs: number }
  | { action: 'sleep'; ms: number }
  | { action: 'give-up' };

/**
 * The next step, `elapsedMs` after the wait began; `lastStartMs` is when the last (failed) attempt started, if
 * any. No attempt outlives the timeout: the last one gets only what is left of it.
 */
export function nextStep(plan: WaitPlan, elapsedMs: number, lastStartMs: number | undefined): Step {
  const left = plan.timeoutMs - elapsedMs;
  if (left <= 0) return { action: 'give-up' };
  const due = lastStartMs === undefined ? 0 : lastStartMs + plan.intervalMs;
  if (elapsedMs < due) return { action: 'sleep', ms: Math.ceil(Math.min(due - elapsedMs, left)) };
  return { action: 'attempt', timeoutMs: Math.ceil(Math.min(plan.attemptTimeoutMs, left)) };
}

/**
 * One attempt: the companion answered 200, answered something else, or could not be reached (`timedOut`: nothing
 * came back within the attempt's time).
 */
export type Attempt = { ok: true } | { ok: false; reason: string; timedOut: boolean };

/**
 * The attempt to name when `wait` gives up. An attempt that timed out within less than an attempt's own limit (the
 * wait's last moments: a few ms on a busy machine) says nothing of the companion, so the one before it, if it
 * failed otherwise (an answer of 503, a refused connection), is what the user is told.
 */
export function lastToSay(
  plan: WaitPlan,
  previous: Attempt | undefined,
  latest: Attempt,
  latestTimeoutMs: number,
): Attempt {
  const cutShort = !latest.ok && latest.timedOut && latestTimeoutMs < plan.attemptTimeoutMs;
  return cutShort && previous !== undefined && !previous.ok ? previous : latest;
}

/** What `wait` says when it gives up: what it asked, for how long, how often, and the last answer. */
export function giveUpMessage(url: string, plan: WaitPlan, attempts: number, last: Attempt | undefined) {
  const seconds = plan.timeoutMs / 1000;
  const lastAnswer = last === undefined || last.ok ? 'no attempt finished' : last.reason;
  return `the companion did not answer 200 on ${url} within ${seconds} s (${attempts} attempt${attempts === 1 ? '' : 's'}); last: ${lastAnswer}`;
}
