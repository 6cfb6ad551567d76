// kubelet's probe decisions as pure functions: when a probe worker probes, how its results become the published
// state, and when a container counts as started, ready, or due for a restart. Mirrors
// k8s.io/kubernetes pkg/kubelet/prober/worker.go (doProbe) and prober_manager.go (UpdatePodStatus).

import type { ProbeKind } from '../../src/scheme.js';

export type Outcome = 'success' | 'failure';
/** What kubelet's results manager holds for a worker (results.Result). */
export type Published = Outcome | 'unknown';

export interface ProbeTiming {
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

/** A Probe's timing fields with the API server's defaults (pkg/apis/core/v1/defaults.go SetDefaults_Probe). */
export function probeTiming(probe: Partial<Record<keyof ProbeTiming, unknown>>): ProbeTiming {
  const int = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
  return {
    initialDelaySeconds: int(probe.initialDelaySeconds, 0),
    periodSeconds: int(probe.periodSeconds, 10),
    timeoutSeconds: int(probe.timeoutSeconds, 1),
    successThreshold: int(probe.successThreshold, 1),
    failureThreshold: int(probe.failureThreshold, 3),
  };
}

export interface WorkerState {
  published: Published;
  /** The last result and how many times in a row it came (worker.lastResult, worker.resultRun). */
  lastResult: Outcome | undefined;
  resultRun: number;
  /** Set after a liveness or startup failure was published: no probing until the container is replaced. */
  onHold: boolean;
}

/** newWorker: readiness starts as Failure, liveness as Success, startup as Unknown. */
export function initialValue(kind: ProbeKind): Published {
  return kind === 'readiness' ? 'failure' : kind === 'liveness' ? 'success' : 'unknown';
}

export function newWorker(kind: ProbeKind): WorkerState {
  return { published: initialValue(kind), lastResult: undefined, resultRun: 0, onHold: false };
}

/**
 * doProbe on a new container ID: the initial value is published again and probing resumes. lastResult and
 * resultRun are kept (a liveness or startup worker zeroed resultRun when it went on hold).
 */
export function onNewContainer(kind: ProbeKind, worker: WorkerState): WorkerState {
  return { ...worker, published: initialValue(kind), onHold: false };
}

export interface ProbeGate {
  /** Since the container started, in kubelet seconds. */
  secondsSinceStart: number;
  /** Whether the container has started: its startup probe succeeded, or it has none. */
  started: boolean;
}

/** doProbe's gates, in its order: on hold; `int32(time.Since(StartedAt).Seconds()) < InitialDelaySeconds`;
 * startup probes stop once the container started, the others wait for it. */
export function shouldProbe(
  kind: ProbeKind,
  worker: WorkerState,
  timing: ProbeTiming,
  gate: ProbeGate,
): boolean {
  if (worker.onHold) return false;
  if (Math.floor(gate.secondsSinceStart) < timing.initialDelaySeconds) return false;
  return kind === 'startup' ? !gate.started : gate.started;
}

/**
 * doProbe after a result: a result changes the published state only after successThreshold / failureThreshold
 * of them in a row. A published liveness or startup failure means kubelet kills and restarts the container; the
 * worker goes on hold with resultRun zeroed.
 */
export function recordResult(
  kind: ProbeKind,
  worker: WorkerState,
  timing: ProbeTiming,
  result: Outcome,
): { worker: WorkerState; restart: boolean } {
  const resultRun = worker.lastResult === result ? worker.resultRun + 1 : 1;
  const threshold = result === 'failure' ? timing.failureThreshold : timing.successThreshold;
  const next: WorkerState = { ...worker, lastResult: result, resultRun };
  if (resultRun < threshold) return { worker: next, restart: false };
  if (result === 'failure' && kind !== 'readiness') {
    return { worker: { ...next, published: 'failure', onHold: true, resultRun: 0 }, restart: true };
  }
  return { worker: { ...next, published: result }, restart: false };
}

/** UpdatePodStatus: started once the startup result is Success; a container without a startup probe is started. */
export function isStarted(startup: Published | undefined): boolean {
  return startup === undefined || startup === 'success';
}

/** UpdatePodStatus: ready only when started and the readiness result is Success, or there is no readiness probe. */
export function isReady(started: boolean, readiness: Published | undefined): boolean {
  return started && (readiness === undefined || readiness === 'success');
}
