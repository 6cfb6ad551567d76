// Small statistics for the benchmark: percentiles of samples, and the median with min–max across rounds.

/** The q-quantile (0..1) of numeric samples, nearest-rank; NaN for none. */
export function percentile(samples, q) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil(q * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** Median and range of one number per round. */
export function summary(perRound) {
  const sorted = [...perRound].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length };
}

/** Per-round ratios a/b, summarised: the rounds pair up because they ran back to back. */
export function ratioSummary(a, b) {
  return summary(a.map((x, i) => x / b[i]));
}

/** `12.3 (11.9–13.0)` with the given number of decimals. */
export function formatSummary(s, decimals = 1) {
  const f = (x) => x.toFixed(decimals);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** Least-squares slope of y over x, for points `{ x, y }`; NaN for fewer than two distinct x. */
export function slope(points) {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((sum, p) => sum + p.x, 0) / n;
  const my = points.reduce((sum, p) => sum + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.x - mx) ** 2;
    sxy += (p.x - mx) * (p.y - my);
  }
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

/**
 * The lowest value of `key` in each window of `windowSeconds` that starts at or after `fromSeconds`, as points
 * `{ x: minutes, y }` at that sample's time. Samples are `{ t: seconds, [key]: number | null }`; null (not
 * measured) is skipped, and a window without a value is left out.
 */
export function windowLows(samples, key, windowSeconds, fromSeconds) {
  const lows = new Map();
  for (const s of samples) {
    const value = s[key];
    const window = Math.floor(s.t / windowSeconds);
    if (value === null || window * windowSeconds < fromSeconds) continue;
    const low = lows.get(window);
    if (low === undefined || value < low.y) lows.set(window, { x: s.t / 60, y: value });
  }
  return [...lows.keys()].sort((a, b) => a - b).map((w) => lows.get(w));
}

/**
 * A soak check: `met` when the value is at most the limit, `missed` above it, `unmeasured` when there is no value
 * (NaN: too few samples, or the measure was unavailable).
 */
export function check(value, limit) {
  if (!Number.isFinite(value)) return 'unmeasured';
  return value <= limit ? 'met' : 'missed';
}

/** The soak's verdict from its checks: `flat` when all are met, `not flat` when any is missed, else `not judged`. */
export function soakVerdict(checks) {
  if (checks.includes('missed')) return 'not flat';
  return checks.every((c) => c === 'met') ? 'flat' : 'not judged';
}
