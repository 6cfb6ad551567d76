// New connections a second per caller address on one port, as a token bucket: past it a connection is closed as
// soon as it is accepted, before a byte of it is parsed. A port's connections wait in one queue in the kernel,
// first come first served, so kubelet's waits behind whatever a flooder has in it: the fewer microseconds each of
// the flooder's costs, the sooner kubelet's is reached (docs/security.md#under-load). kubelet opens one connection
// per probe, a few a second on a port at the most, so RATE is far above it and far below what a flood costs.
// Pure: the caller closes what it is told to shed.

/** Connections a second each caller address may open on a port, and how many at once. */
export const CONNECTION_RATE = { perSecond: 50, burst: 20 } as const;

/** Addresses kept before idle ones (their bucket full again) are forgotten. */
const KEPT_SOURCES = 4096;

interface Bucket {
  tokens: number;
  atMs: number;
}

export class SourceRate {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly perSecond: number = CONNECTION_RATE.perSecond,
    readonly burst: number = CONNECTION_RATE.burst,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(perSecond > 0) || !(burst >= 1)) {
      throw new Error(`source rate: perSecond must be > 0 and burst >= 1, got ${perSecond} and ${burst}`);
    }
  }

  /** Addresses with a bucket not yet full again. */
  get size(): number {
    return this.buckets.size;
  }

  /** Whether `source` may open one more connection now (and counts it if so). */
  take(source: string): boolean {
    const now = this.now();
    let bucket = this.buckets.get(source);
    if (bucket === undefined) {
      if (this.buckets.size >= KEPT_SOURCES) this.forgetIdle(now);
      bucket = { tokens: this.burst, atMs: now };
      this.buckets.set(source, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.atMs) / 1000) * this.perSecond);
      bucket.atMs = now;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Drops the buckets that have filled up again since last used: a new one starts full, the same. */
  private forgetIdle(now: number): void {
    const refillMs = (this.burst / this.perSecond) * 1000;
    for (const [source, bucket] of this.buckets) {
      if (now - bucket.atMs >= refillMs) this.buckets.delete(source);
    }
  }
}
