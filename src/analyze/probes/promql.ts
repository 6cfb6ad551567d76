// The PromQL analyze --probes asks a user's Prometheus, over the window, and how the answers become samples.
// Labels: `namespace` and `pod` from the PodMonitor's target (deploy/monitoring/podmonitor.yaml), `kind`,
// `container`, `reason` from the companion (honorLabels), kube-state-metrics' own `namespace`, `pod`,
// `container`, `reason`. Pure: prometheus-client.ts sends them.

import { isProbeKind } from '../../scheme.js';
import {
  type CallerLoad,
  type ContainerSample,
  emptySample,
  FAILURE_REASONS,
  type FailureReason,
  type FailureWindow,
  type ProbeSample,
} from './samples.js';

/** One series of an instant vector, or of a range query's matrix. */
export interface Series {
  metric: Record<string, string>;
  values: (readonly [number, number])[];
}

const PROBE = 'namespace, pod, kind, container';

/** The instant queries, at the window's end, by name. `w` is a PromQL duration (`1h`). */
export function instantQueries(w: string, scope: string): Record<string, string> {
  const sel = (extra = '') => `{kind!="healthcheck"${scope}${extra}}`;
  return {
    count: `sum by (${PROBE}) (increase(osm_healthcheck_probe_duration_seconds_count${sel()}[${w}]))`,
    p99: `histogram_quantile(0.99, sum by (${PROBE}, le) (increase(osm_healthcheck_probe_duration_seconds_bucket${sel()}[${w}])))`,
    timeout: `max by (${PROBE}) (osm_healthcheck_probe_timeout_seconds${sel()})`,
    failures: `sum by (${PROBE}, reason) (increase(osm_healthcheck_probe_failures_total${sel()}[${w}]))`,
    firstSuccess: `max by (${PROBE}) (max_over_time(osm_healthcheck_probe_first_success_seconds${sel()}[${w}]))`,
    // What callers other than kubelet made each companion do (docs/security.md#under-load): kubelet does none of it.
    callerLoad: ['shared_answers_total', 'connections_cut_total', 'connections_evicted_total']
      .map((name) => `sum by (namespace, pod) (increase(osm_healthcheck_${name}{${scope.slice(1)}}[${w}]))`)
      .join(' + '),
    restarts: `sum by (namespace, pod, container) (increase(kube_pod_container_status_restarts_total{${scope.slice(1)}}[${w}]) or increase(kube_pod_init_container_status_restarts_total{${scope.slice(1)}}[${w}]))`,
    lastReason: `max by (namespace, pod, container, reason) (kube_pod_container_status_last_terminated_reason{${scope.slice(1)}} == 1)`,
  };
}

/** The range query of liveness failures per pod and step. */
export const failureSteps = (step: string, scope: string) =>
  `sum by (namespace, pod, container) (increase(osm_healthcheck_probe_failures_total{kind="liveness"${scope}}[${step}]))`;

/** `,namespace="x"` for -n, nothing for -A. */
export const scopeMatcher = (namespace: string | undefined) =>
  namespace === undefined ? '' : `,namespace=${JSON.stringify(namespace)}`;

const key = (m: Record<string, string>) => `${m.namespace}/${m.pod}/${m.kind}/${m.container}`;
const last = (s: Series) => s.values[s.values.length - 1]?.[1];
const finite = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? undefined : v);

/** The instant answers, by the names of instantQueries, as probe and container samples. */
export function samplesOf(answers: Record<string, readonly Series[]>): {
  probes: ProbeSample[];
  containers: ContainerSample[];
  callerLoad: CallerLoad[];
} {
  const probes = new Map<string, ProbeSample>();
  const probe = (m: Record<string, string>): ProbeSample | undefined => {
    const kind = m.kind ?? '';
    if (!isProbeKind(kind) || m.namespace === undefined || m.pod === undefined) return undefined;
    let s = probes.get(key(m));
    if (s === undefined) {
      s = emptySample(m.namespace, m.pod, m.container ?? '', kind);
      probes.set(key(m), s);
    }
    return s;
  };
  for (const series of answers.count ?? []) {
    const s = probe(series.metric);
    if (s !== undefined) s.count = Math.round(last(series) ?? 0);
  }
  for (const [name, field] of [
    ['p99', 'p99Seconds'],
    ['timeout', 'timeoutSeconds'],
    ['firstSuccess', 'firstSuccessSeconds'],
  ] as const) {
    for (const series of answers[name] ?? []) {
      const s = probe(series.metric);
      if (s !== undefined) s[field] = finite(last(series));
    }
  }
  for (const series of answers.failures ?? []) {
    const s = probe(series.metric);
    const reason = series.metric.reason as FailureReason;
    if (s !== undefined && FAILURE_REASONS.includes(reason)) {
      s.failures[reason] = Math.round(last(series) ?? 0);
    }
  }
  const callerLoad = (answers.callerLoad ?? []).flatMap((s) => {
    const { namespace, pod } = s.metric;
    const requests = finite(last(s));
    return namespace === undefined || pod === undefined || requests === undefined
      ? []
      : [{ namespace, pod, requests }];
  });
  return { probes: [...probes.values()], containers: containerSamples(answers), callerLoad };
}

function containerSamples(answers: Record<string, readonly Series[]>): ContainerSample[] {
  const reasons = new Map<string, string>();
  for (const { metric: m } of answers.lastReason ?? []) {
    if (m.reason !== undefined) reasons.set(`${m.namespace}/${m.pod}/${m.container}`, m.reason);
  }
  return (answers.restarts ?? []).flatMap((series) => {
    const m = series.metric;
    if (m.namespace === undefined || m.pod === undefined || m.container === undefined) return [];
    return [
      {
        namespace: m.namespace,
        pod: m.pod,
        container: m.container,
        restarts: Math.round(last(series) ?? 0),
        counted: 'over the window' as const,
        lastTermination: reasons.get(`${m.namespace}/${m.pod}/${m.container}`),
        lastEndedAt: undefined,
      },
    ];
  });
}

/** The range answer as failure windows: per namespace, container and step, each pod's failures. */
export function windowsOf(matrix: readonly Series[], stepSeconds: number): FailureWindow[] {
  const steps = new Map<string, FailureWindow>();
  for (const series of matrix) {
    const { namespace, pod, container } = series.metric;
    if (namespace === undefined || pod === undefined || container === undefined) continue;
    for (const [at, value] of series.values) {
      const id = `${namespace}/${container}/${at}`;
      let step = steps.get(id);
      if (step === undefined) {
        step = { namespace, container, from: at - stepSeconds, to: at, pods: {} };
        steps.set(id, step);
      }
      step.pods[pod] = Math.round(value);
    }
  }
  return [...steps.values()].sort((a, b) => a.to - b.to);
}
