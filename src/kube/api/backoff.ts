// How long to wait before asking the API server again after a failure: doubling from a first wait to a most, as
// client-go's backoff does. The webhook's version, its caches' watches and self-managed TLS all retry by it.

export interface Backoff {
  firstMs: number;
  maxMs: number;
}

export const BACKOFF: Backoff = { firstMs: 1_000, maxMs: 60_000 };

/** Before retry number `failures` (1 after the first failure): doubling from firstMs, at most maxMs. */
export function retryDelay(backoff: Backoff, failures: number): number {
  return Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.max(0, failures - 1));
}
