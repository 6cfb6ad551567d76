// The static rules over a workload's probes (docs/analyze.md#probe-rules): what the pod template alone shows
// wrong, each the Kubernetes docs' caution it follows. Pure; a sound template gets no finding.

import type { Finding } from './finding.js';
import type { ContainerProbe, ContainerProbes, Timing } from './pod-probes.js';

/**
 * The shortest liveness failure budget (periodSeconds x failureThreshold) the rules accept: kubelet's defaults
 * (10 s x 3). A shorter one restarts a container for a pause a readiness probe should have ridden out.
 */
export const MIN_LIVENESS_BUDGET_SECONDS = 30;

export const budget = (t: Timing) => t.periodSeconds * t.failureThreshold;

/**
 * The liveness failureThreshold the fixes set: the smallest that makes the budget at least the minimum and, on the
 * same check as readiness, longer than readiness's, so one value clears both rules.
 */
export function livenessThreshold(liveness: Timing, readiness: ContainerProbe | undefined): number {
  const period = liveness.periodSeconds;
  let threshold = Math.max(liveness.failureThreshold, Math.ceil(MIN_LIVENESS_BUDGET_SECONDS / period));
  if (readiness !== undefined)
    threshold = Math.max(threshold, Math.floor(budget(readiness.timing) / period) + 1);
  return threshold;
}

const seconds = (t: Timing) => `${t.periodSeconds} s x ${t.failureThreshold} = ${budget(t)} s`;

/** Every static finding on one container; `behindService`: a Service selects the workload's pods. */
export function staticFindings(c: ContainerProbes, behindService: boolean): Finding[] {
  const { liveness, readiness, startup } = c.probes;
  const found: Finding[] = [];
  const base = { container: c.container, needsAction: false } as const;
  for (const probe of [liveness, readiness, startup]) {
    if (probe?.handler !== 'exec') continue;
    found.push({
      ...base,
      rule: 'exec-probe',
      kind: probe.kind,
      evidence: `${probe.kind} runs \`${probe.check}\` inside the container: the companion never sees it, so no live rule judges it`,
      change: undefined,
      advice: `where the app serves the same check over HTTP, TCP or gRPC, make the ${probe.kind}Probe an httpGet, tcpSocket or grpc probe of it`,
    });
  }
  if (liveness === undefined) return found;
  const sameCheck = readiness !== undefined && readiness.check === liveness.check;
  const threshold = livenessThreshold(liveness.timing, sameCheck ? readiness : undefined);
  const livenessFix = { livenessProbe: { failureThreshold: threshold } };
  if (sameCheck && budget(liveness.timing) <= budget(readiness.timing)) {
    found.push({
      ...base,
      rule: 'liveness-not-after-readiness',
      kind: 'liveness',
      evidence: `liveness and readiness both check ${liveness.check}; liveness fails after ${seconds(liveness.timing)}, readiness after ${seconds(readiness.timing)}: an overloaded pod is restarted before it is taken out of the Service`,
      change: livenessFix,
      advice: `give liveness a longer budget than readiness: failureThreshold ${threshold}`,
    });
  }
  if (readiness === undefined && behindService) {
    const period = Math.min(liveness.timing.periodSeconds, 10);
    found.push({
      ...base,
      rule: 'liveness-without-readiness',
      kind: 'liveness',
      evidence: `a liveness probe (${liveness.check}) but no readiness probe, and a Service sends this workload traffic: a pod that cannot serve keeps receiving requests until liveness restarts it`,
      change: {
        readinessProbe: {
          ...liveness.action,
          periodSeconds: period,
          timeoutSeconds: liveness.timing.timeoutSeconds,
          failureThreshold: 1,
        },
      },
      advice: `add a readiness probe (here the liveness check, failing sooner: after ${period} s)`,
    });
  }
  if (startup === undefined && liveness.timing.initialDelaySeconds > budget(liveness.timing)) {
    const t = liveness.timing;
    const failureThreshold = Math.ceil((t.initialDelaySeconds + budget(t)) / t.periodSeconds);
    found.push({
      ...base,
      rule: 'startup-in-initial-delay',
      kind: 'liveness',
      evidence: `liveness waits initialDelaySeconds ${t.initialDelaySeconds} (longer than its failure budget, ${seconds(t)}) and there is no startup probe: every start waits the whole delay, and a slower boot is still killed`,
      change: {
        startupProbe: {
          ...liveness.action,
          periodSeconds: t.periodSeconds,
          timeoutSeconds: t.timeoutSeconds,
          failureThreshold,
        },
        livenessProbe: { initialDelaySeconds: 0 },
      },
      advice: `a startup probe with the same budget (${t.periodSeconds} s x ${failureThreshold}), and liveness from the first success on`,
    });
  }
  if (budget(liveness.timing) < MIN_LIVENESS_BUDGET_SECONDS) {
    found.push({
      ...base,
      rule: 'liveness-budget-short',
      kind: 'liveness',
      evidence: `liveness restarts the container after ${seconds(liveness.timing)} of failures, under ${MIN_LIVENESS_BUDGET_SECONDS} s: a GC pause, a slow disk or a load spike becomes a restart`,
      change: livenessFix,
      advice: `failureThreshold ${threshold} (${liveness.timing.periodSeconds * threshold} s)`,
    });
  }
  return found;
}
