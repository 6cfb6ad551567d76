// A prom-client metric object for a histogram whose buckets, sum and count someone else counted exactly (a plain
// recorder): prom-client's Histogram can only observe() values one by one. Shared by the companion's and the
// webhook's expositions.

import type { Metric } from 'prom-client';

/** One histogram series as Prometheus counts it: cumulative, one count per bound, then +Inf. */
export interface HistogramSample<L> {
  readonly labels: L;
  /** Observations of at most `bounds[i]` seconds. */
  readonly cumulative: readonly number[];
  /** Every observation, the +Inf bucket. */
  readonly count: number;
  readonly sumSeconds: number;
}

/**
 * A metric object of the shape prom-client's Registry reads (lib/registry.js: name, help, type, and get()
 * resolving to values with metricName and labels, as Histogram#get() gives), so prom-client still writes the text.
 */
export function exactHistogram<L extends Record<string, string | number>>(
  name: string,
  help: string,
  bounds: readonly number[],
  read: () => readonly HistogramSample<L>[],
): Metric {
  const base = { name, help, type: 'histogram', aggregator: 'sum' } as const;
  const series = (s: HistogramSample<L>) => [
    ...s.cumulative.map((value, i) => ({
      metricName: `${name}_bucket`,
      labels: { ...s.labels, le: bounds[i] ?? Number.NaN },
      value,
    })),
    { metricName: `${name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count },
    { metricName: `${name}_sum`, labels: s.labels, value: s.sumSeconds },
    { metricName: `${name}_count`, labels: s.labels, value: s.count },
  ];
  const metric = {
    ...base,
    get: async () => ({ ...base, values: read().flatMap(series) }),
    // The recorder owns the values: Registry#resetMetrics() has nothing to clear here.
    reset: () => {},
  };
  // prom-client's types admit only its own metric classes; its Registry uses no more of a metric than the above.
  return metric as unknown as Metric;
}

/** Counts per bucket slot (slot i holds (bounds[i-1], bounds[i]], the last what is over) made cumulative. */
export function cumulativeOf(slots: ArrayLike<number>): { cumulative: number[]; count: number } {
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < slots.length; i++) {
    total += slots[i] ?? 0;
    cumulative.push(total);
  }
  cumulative.pop();
  return { cumulative, count: total };
}

/** The slot of `seconds` among `bounds`: the first bound it does not exceed, else the one past the last. */
export function slotOf(bounds: ArrayLike<number>, seconds: number): number {
  let slot = 0;
  while (slot < bounds.length && seconds > (bounds[slot] ?? 0)) slot++;
  return slot;
}
