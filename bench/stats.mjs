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
