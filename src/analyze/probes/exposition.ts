// One companion's /metrics text (Prometheus' text format 0.0.4) as probe samples, for analyze --probes without
// Prometheus: counts since the companion started, the p99 from its cumulative histogram as Prometheus'
// histogram_quantile computes it (linear within the bucket). Pure.

import { isProbeKind } from '../../scheme.js';
import {
  type CallerLoad,
  emptySample,
  FAILURE_REASONS,
  type FailureReason,
  type ProbeSample,
} from './samples.js';

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const PREFIX = 'osm_healthcheck_probe_';

/** The q-quantile of cumulative buckets [(le, count)], sorted by le, ending at +Inf; undefined with no count. */
export function quantile(q: number, buckets: readonly (readonly [number, number])[]): number | undefined {
  const total = buckets[buckets.length - 1]?.[1] ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let below = 0;
  let lower = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      // histogram_quantile: the highest finite bound where the rank falls in +Inf.
      if (le === Number.POSITIVE_INFINITY) return lower;
      return lower + (le - lower) * ((rank - below) / Math.max(count - below, Number.MIN_VALUE));
    }
    below = count;
    lower = le;
  }
  return lower;
}

/** The series that count what callers other than kubelet made the companion do (docs/metrics.md). */
const CALLER_LOAD_SERIES = [
  'osm_healthcheck_shared_answers_total',
  'osm_healthcheck_connections_cut_total',
  'osm_healthcheck_connections_evicted_total',
];

/** One companion's caller load since it started: the sum of those counters over their labels. */
export function exposedCallerLoad(text: string, namespace: string, pod: string): CallerLoad {
  let requests = 0;
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m !== null && CALLER_LOAD_SERIES.includes(m[1] ?? '')) requests += Number(m[3]) || 0;
  }
  return { namespace, pod, requests };
}

export function exposedSamples(text: string, namespace: string, pod: string): ProbeSample[] {
  const samples = new Map<string, ProbeSample>();
  const buckets = new Map<string, [number, number][]>();
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m === null || !(m[1] ?? '').startsWith(PREFIX)) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(LABEL)].map((l) => [l[1], l[2] ?? '']));
    const kind = labels.kind ?? '';
    if (!isProbeKind(kind)) continue;
    const id = `${kind}/${labels.container}`;
    let s = samples.get(id);
    if (s === undefined) {
      s = emptySample(namespace, pod, labels.container ?? '', kind);
      samples.set(id, s);
    }
    const value = Number(m[3]);
    switch (m[1]?.slice(PREFIX.length)) {
      case 'duration_seconds_count':
        s.count += value;
        break;
      case 'duration_seconds_bucket': {
        const list = buckets.get(id) ?? [];
        list.push([labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(labels.le), value]);
        buckets.set(id, list);
        break;
      }
      case 'timeout_seconds':
        s.timeoutSeconds = value;
        break;
      case 'first_success_seconds':
        s.firstSuccessSeconds = value;
        break;
      case 'failures_total':
        if (FAILURE_REASONS.includes(labels.reason as FailureReason)) {
          s.failures[labels.reason as FailureReason] = value;
        }
        break;
    }
  }
  for (const [id, list] of buckets) {
    const s = samples.get(id);
    if (s !== undefined)
      s.p99Seconds = quantile(
        0.99,
        list.sort((a, b) => a[0] - b[0]),
      );
  }
  return [...samples.values()];
}
