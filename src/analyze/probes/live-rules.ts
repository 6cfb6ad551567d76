// The live rules (docs/analyze.md#probe-rules): what the companions saw the probes of one workload do, against
// the timing its template gives them. Each rule speaks only past its minimum of samples and says how many it
// had. Pure.

import type { ProbeKind } from '../../scheme.js';
import type { Finding } from './finding.js';
import type { ContainerProbe, ContainerProbes } from './pod-probes.js';
import type { ContainerSample, FailureReason, FailureWindow, ProbeSample } from './samples.js';
import { budget, livenessThreshold } from './static-rules.js';

/** Fewer probes than this in the window say nothing about a tail: 5 minutes of kubelet's default period. */
export const MIN_PROBES = 30;
/** A p99 at three quarters of timeoutSeconds or more is near it: a quarter of headroom is one load spike. */
export const NEAR_TIMEOUT_SHARE = 0.75;
/** A boot that uses this share of its budget or more is near it. */
export const NEAR_BUDGET_SHARE = 0.8;

/** The samples of one workload, already narrowed to its pods. */
export interface WorkloadSamples {
  probes: readonly ProbeSample[];
  containers: readonly ContainerSample[];
  /** Undefined where the source has no time steps (one read of /metrics). */
  windows: readonly FailureWindow[] | undefined;
  /** `over the last 1h`, or `since each companion started`. */
  span: string;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const ms = (seconds: number) => `${Math.round(seconds * 1000)} ms`;
const failuresOf = (s: ProbeSample) => sum(Object.values(s.failures));

/** `6 timeout, 3 status`. */
function reasons(samples: readonly ProbeSample[]): string {
  const by = new Map<FailureReason, number>();
  for (const s of samples) {
    for (const [reason, n] of Object.entries(s.failures) as [FailureReason, number][]) {
      by.set(reason, (by.get(reason) ?? 0) + n);
    }
  }
  const parts = [...by].filter(([, n]) => n > 0).map(([reason, n]) => `${n} ${reason}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

function nearTimeout(c: ContainerProbes, probe: ContainerProbe, of: readonly ProbeSample[], span: string) {
  const count = sum(of.map((s) => s.count));
  const judged = of.filter((s) => s.count >= MIN_PROBES && s.p99Seconds !== undefined);
  if (count < MIN_PROBES || judged.length === 0) return undefined;
  const worst = judged.reduce((a, b) => ((b.p99Seconds ?? 0) > (a.p99Seconds ?? 0) ? b : a));
  const p99 = worst.p99Seconds ?? 0;
  const timeout = worst.timeoutSeconds ?? probe.timing.timeoutSeconds;
  if (p99 < NEAR_TIMEOUT_SHARE * timeout) return undefined;
  const timeouts = sum(of.map((s) => s.failures.timeout ?? 0));
  const next = Math.max(timeout + 1, Math.ceil(p99 * 2));
  return finding(c, probe.kind, 'near-timeout', {
    evidence: `${probe.kind} p99 ${ms(p99)} (pod ${worst.pod}) against timeoutSeconds ${timeout} ${span}, ${timeouts} timeout${timeouts === 1 ? '' : 's'} in ${count} probes`,
    change: { [`${probe.kind}Probe`]: { timeoutSeconds: next } },
    advice: `timeoutSeconds ${next}, twice the p99, or make ${probe.check} answer faster`,
  });
}

function livenessRestarts(
  c: ContainerProbes,
  probe: ContainerProbe,
  w: WorkloadSamples,
  of: readonly ProbeSample[],
) {
  const restarted = w.containers.filter((s) => s.container === c.container && s.restarts > 0);
  const failed = sum(of.map(failuresOf));
  if (restarted.length === 0 || failed === 0) return undefined;
  const restarts = sum(restarted.map((s) => s.restarts));
  const last = restarted.find((s) => s.lastTermination !== undefined)?.lastTermination;
  const threshold = Math.max(probe.timing.failureThreshold * 2, livenessThreshold(probe.timing, undefined));
  const timeouts = sum(of.map((s) => s.failures.timeout ?? 0));
  const timeoutSeconds = timeouts > 0 ? { timeoutSeconds: probe.timing.timeoutSeconds * 2 } : {};
  return {
    ...finding(c, 'liveness', 'liveness-restarts', {
      evidence: `${restarts} restart${restarts === 1 ? '' : 's'} of ${c.container} on ${restarted.length} pod${restarted.length === 1 ? '' : 's'} ${w.span}${last === undefined ? '' : ` (last: ${last})`}, and ${failed} liveness failures in ${sum(of.map((s) => s.count))} probes: ${reasons(of)}`,
      change: { livenessProbe: { failureThreshold: threshold, ...timeoutSeconds } },
      advice: `find why ${probe.check} failed (the reasons above); until then a longer budget: failureThreshold ${threshold}${timeouts > 0 ? `, timeoutSeconds ${probe.timing.timeoutSeconds * 2}` : ''}`,
    }),
    needsAction: true,
  };
}

function startupBudget(c: ContainerProbes, w: WorkloadSamples) {
  const probe = c.probes.startup ?? c.probes.liveness;
  if (probe === undefined) return undefined;
  const boots = w.probes.filter(
    (s) => s.container === c.container && s.kind === probe.kind && s.firstSuccessSeconds !== undefined,
  );
  if (boots.length === 0) return undefined;
  const t = probe.timing;
  const longest = Math.max(...boots.map((s) => s.firstSuccessSeconds ?? 0)) + t.initialDelaySeconds;
  const allowed = t.initialDelaySeconds + budget(t);
  if (longest < NEAR_BUDGET_SHARE * allowed) return undefined;
  const failureThreshold = Math.ceil((2 * longest) / t.periodSeconds);
  const startupProbe =
    probe.kind === 'startup'
      ? { failureThreshold }
      : {
          ...probe.action,
          periodSeconds: t.periodSeconds,
          timeoutSeconds: t.timeoutSeconds,
          failureThreshold,
        };
  return finding(c, probe.kind, 'startup-budget', {
    evidence: `the slowest of ${boots.length} start${boots.length === 1 ? '' : 's'} seen took ${Math.round(longest)} s to its first ${probe.kind} success, of a budget of ${allowed} s (initialDelaySeconds ${t.initialDelaySeconds} + ${t.periodSeconds} s x ${t.failureThreshold})`,
    change: { startupProbe },
    advice: `a startup probe allowing twice the slowest start: ${t.periodSeconds} s x ${failureThreshold}`,
  });
}

function sharedDependency(c: ContainerProbes, probe: ContainerProbe, w: WorkloadSamples) {
  const steps = (w.windows ?? []).filter((s) => s.container === c.container);
  const shared = steps.filter((s) => {
    const counts = Object.values(s.pods);
    return counts.length >= 2 && counts.every((n) => n > 0);
  });
  if (shared.length === 0) return undefined;
  const first = shared[0] as FailureWindow;
  const replicas = Object.keys(first.pods).length;
  const port = (probe.action.httpGet ?? probe.action.grpc) as { port?: unknown } | undefined;
  const at = (s: number) => new Date(s * 1000).toISOString().slice(11, 16);
  return finding(c, 'liveness', 'shared-dependency', {
    evidence: `liveness failed on all ${replicas} replicas in ${shared.length} of ${steps.length} steps ${w.span} (first ${at(first.from)}-${at(first.to)} UTC, ${sum(Object.values(first.pods))} failures): a dependency they share, not the pods`,
    change:
      port?.port === undefined
        ? undefined
        : { livenessProbe: { httpGet: null, grpc: null, tcpSocket: { port: port.port } } },
    advice: `liveness should check the process alone (that it accepts connections), readiness the dependencies`,
  });
}

function finding(
  c: ContainerProbes,
  kind: ProbeKind,
  rule: Finding['rule'],
  body: Pick<Finding, 'evidence' | 'change' | 'advice'>,
): Finding {
  return { rule, container: c.container, kind, needsAction: false, ...body };
}

/** Every live finding on one container of a workload. */
export function liveFindings(c: ContainerProbes, w: WorkloadSamples): Finding[] {
  const found: (Finding | undefined)[] = [];
  for (const probe of Object.values(c.probes)) {
    const of = w.probes.filter((s) => s.container === c.container && s.kind === probe.kind);
    found.push(nearTimeout(c, probe, of, w.span));
    if (probe.kind === 'liveness') {
      found.push(livenessRestarts(c, probe, w, of), sharedDependency(c, probe, w));
    }
  }
  found.push(startupBudget(c, w));
  return found.filter((f): f is Finding => f !== undefined);
}
