// Fair shares of one bounded resource (a listener's connections, its checks in flight) among the addresses that
// hold it. Past the capacity a newcomer takes the place of the oldest item of whichever source holds the most,
// unless it holds the most itself: so a caller that holds many cannot keep out one that holds few, and kubelet,
// which opens a connection per probe and holds one or two at a time, always gets in (docs/security.md#under-load).
// One cap for all was the lever: at 1,024 held connections kubelet's own was refused like the attacker's.
// Pure: the caller closes what it is told to evict. O(1) per call: sources sit in buckets by how much they hold.

/** What became of an item offered past nothing, under, or at the capacity. */
export type Admission<T> =
  | { readonly admitted: true; readonly evicted: undefined }
  /** Admitted in place of `evicted`, the oldest item of a source that held more than the newcomer's. */
  | { readonly admitted: true; readonly evicted: T; readonly evictedSource: string }
  /** At capacity, and no other source holds more than the newcomer's: refused. */
  | { readonly admitted: false };

export class SourceShares<T> {
  readonly capacity: number;
  private total = 0;
  /** Each source's items, oldest first (a Set keeps insertion order). */
  private readonly bySource = new Map<string, Set<T>>();
  /** The sources holding exactly n items, by n; the most is `most`. */
  private readonly byCount = new Map<number, Set<string>>();
  private most = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new Error(`source shares: capacity must be an integer >= 1, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  get size(): number {
    return this.total;
  }

  /** How many items `source` holds. */
  held(source: string): number {
    return this.bySource.get(source)?.size ?? 0;
  }

  /** How many sources hold anything. */
  get sources(): number {
    return this.bySource.size;
  }

  /**
   * Offers `item` from `source`. Under the capacity it is admitted. At it, it is admitted in place of the oldest
   * item of a source that holds more than `source` does (the evicted item is no longer held: close it), else refused.
   */
  add(source: string, item: T): Admission<T> {
    if (this.total < this.capacity) {
      this.insert(source, item);
      return { admitted: true, evicted: undefined };
    }
    const mine = this.held(source);
    if (this.most <= mine) return { admitted: false };
    const victimSource = this.largestOtherThan(source);
    const victims = this.bySource.get(victimSource) as Set<T>;
    const evicted = victims.values().next().value as T;
    this.delete(victimSource, evicted);
    this.insert(source, item);
    return { admitted: true, evicted, evictedSource: victimSource };
  }

  /** `item` is no longer held (closed, finished, evicted). An item not held is ignored. */
  delete(source: string, item: T): void {
    const items = this.bySource.get(source);
    if (items === undefined || !items.delete(item)) return;
    this.total--;
    const count = items.size + 1;
    this.move(source, count, count - 1);
    if (items.size === 0) this.bySource.delete(source);
  }

  private insert(source: string, item: T): void {
    let items = this.bySource.get(source);
    if (items === undefined) {
      items = new Set();
      this.bySource.set(source, items);
    }
    if (items.has(item)) return;
    items.add(item);
    this.total++;
    this.move(source, items.size - 1, items.size);
  }

  private move(source: string, from: number, to: number): void {
    if (from > 0) {
      const bucket = this.byCount.get(from);
      bucket?.delete(source);
      if (bucket?.size === 0) this.byCount.delete(from);
    }
    if (to > 0) {
      let bucket = this.byCount.get(to);
      if (bucket === undefined) {
        bucket = new Set();
        this.byCount.set(to, bucket);
      }
      bucket.add(source);
    }
    if (to > this.most) this.most = to;
    else if (from === this.most && !this.byCount.has(from)) this.most = from - 1;
  }

  /** A source holding `most` items that is not `source` (one exists: the caller checked most > held(source)). */
  private largestOtherThan(source: string): string {
    for (const candidate of this.byCount.get(this.most) ?? []) {
      if (candidate !== source) return candidate;
    }
    throw new Error(`source shares: no source other than ${source} holds ${this.most}`);
  }
}

const MAPPED = '::ffff:';

/** The address a share is counted under: an IPv4 caller on a dual-stack socket (`::ffff:10.1.2.3`) as IPv4. */
export function sourceOf(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return '';
  return remoteAddress.startsWith(MAPPED) && remoteAddress.includes('.')
    ? remoteAddress.slice(MAPPED.length)
    : remoteAddress;
}
