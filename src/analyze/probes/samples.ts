// What the live rules read, whichever source it came from (Prometheus over the window, or one read of each
// companion's /metrics): per probe of a pod, per container of a pod, and per workload the windows in which its
// replicas' liveness probes failed. Plain data.

import type { FailureReason } from '../../probe/failure-reason.js';
import type { ProbeKind } from '../../scheme.js';

export { FAILURE_REASONS, type FailureReason } from '../../probe/failure-reason.js';

export interface ProbeSample {
  namespace: string;
  pod: string;
  container: string;
  kind: ProbeKind;
  /** Probes the companion answered in the window. */
  count: number;
  /** The 99th percentile of their duration, where the histogram gave one. */
  p99Seconds: number | undefined;
  /** The timeout the companion ran the probe with (osm_healthcheck_probe_timeout_seconds). */
  timeoutSeconds: number | undefined;
  failures: Partial<Record<FailureReason, number>>;
  /** Seconds from the first probe request to the first success, once per companion process. */
  firstSuccessSeconds: number | undefined;
}

/** A probe's sample before any series is read into it. */
export const emptySample = (
  namespace: string,
  pod: string,
  container: string,
  kind: ProbeKind,
): ProbeSample => ({
  namespace,
  pod,
  container,
  kind,
  count: 0,
  p99Seconds: undefined,
  timeoutSeconds: undefined,
  failures: {},
  firstSuccessSeconds: undefined,
});

export interface ContainerSample {
  namespace: string;
  pod: string;
  container: string;
  /**
   * Restarts: over the window (kube-state-metrics through Prometheus), or the pod's own `restartCount` where its
   * last restart ended within the window (the pod's status: what `kubectl get pods` shows).
   */
  restarts: number;
  counted: 'over the window' | 'restartCount';
  /** The last termination's reason and exit code, from the pod's status or kube-state-metrics. */
  lastTermination: string | undefined;
  /** When the last termination ended (ms since the epoch), where the pod's status says. */
  lastEndedAt: number | undefined;
}

/** Liveness failures per pod in one step of the window (Prometheus only: one read of /metrics has no time). */
export interface FailureWindow {
  namespace: string;
  /** The step's start and end, in seconds since the epoch. */
  from: number;
  to: number;
  /** Liveness failures in the step, by pod (every pod seen in the step, 0 included) and by container. */
  pods: Record<string, number>;
  container: string;
}

/**
 * What callers other than kubelet made one pod's companion do in the window: answers that shared a check, and
 * connections shed, cut or evicted (docs/security.md#under-load). kubelet does none of these.
 */
export interface CallerLoad {
  namespace: string;
  pod: string;
  requests: number;
}

export interface Samples {
  /** Where they came from, for the report: `Prometheus https://... over 1h`, `the companions' /metrics`. */
  source: string;
  /** The window in seconds, or undefined where counts run since each companion started. */
  windowSeconds: number | undefined;
  probes: ProbeSample[];
  containers: ContainerSample[];
  windows: FailureWindow[] | undefined;
  /** Per pod; absent where the source did not say (a companion from before the counts). */
  callerLoad?: CallerLoad[];
}
