// The live rules (docs/analyze.md#probe-rules): what the companions saw the probes of one workload do, and what
// kubelet recorded of its restarts (the pods' status, its events), against the timing its template gives them.
// Each rule speaks only past its minimum of samples and says how many it had, and where they came from. Pure.

import type { ProbeKind } from '../../scheme.js';
import type { Finding } from './finding.js';
import type { LivenessEvents } from './kubelet-events.js';
import type { ContainerProbe, ContainerProbes } from './pod-probes.js';
import type { CallerLoad, ContainerSample, FailureReason, FailureWindow, ProbeSample } from './samples.js';
import { budget, livenessThreshold } from './static-rules.js';

/** Fewer probes than this in the window say nothing about a tail: 5 minutes of kubelet's default period. */
export const MIN_PROBES = 30;
/** A p99 at three quarters of timeoutSeconds or more is near it: a quarter of headroom is one load spike. */
export const NEAR_TIMEOUT_SHARE = 0.75;
/**
 * The share of its budget a boot may use: past it, startup-budget fires; its fix gives the slowest boot seen a
 * budget it uses exactly this share of, so the fixed workload is not flagged. Past half, one node twice as slow
 * (a cold image cache, a busy neighbour) restarts the boot before it ends.
 */
export const BOOT_SHARE = 0.5;
/** Liveness restarts of every replica within this span are one cause: Prometheus' step, from kubelet's record. */
export const SHARED_SPAN_MS = 300_000;

/** The samples and the record of one workload, already narrowed to its pods. */
export interface WorkloadSamples {
  /** The workload's pods: its replicas. */
  pods: readonly string[];
  /** What the companions saw ([] with no live source). */
  probes: readonly ProbeSample[];
  /** Restarts, from the pods' status or kube-state-metrics. */
  containers: readonly ContainerSample[];
  /** Kubelet's liveness events within the window. */
  events: readonly LivenessEvents[];
  /** Undefined where the source has no time steps (one read of /metrics, or no live source). */
  windows: readonly FailureWindow[] | undefined;
  /** The live source's span: `over the last 1h`, `since each companion started`; undefined with none. */
  span: string | undefined;
  /** Per pod, what callers other than kubelet made its companion do; absent where the source did not say. */
  callerLoad?: readonly CallerLoad[];
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

/**
 * A pod whose companion answered this many requests from shared checks, or shed, cut or evicted this many
 * connections, in the window was under another caller's load: its probes' durations measure that, not the probe.
 */
export const LOADED_REQUESTS = MIN_PROBES;

function nearTimeout(
  c: ContainerProbes,
  probe: ContainerProbe,
  of: readonly ProbeSample[],
  span: string,
  callerLoad: readonly CallerLoad[],
) {
  const count = sum(of.map((s) => s.count));
  const judged = of.filter((s) => s.count >= MIN_PROBES && s.p99Seconds !== undefined);
  if (count < MIN_PROBES || judged.length === 0) return undefined;
  const worst = judged.reduce((a, b) => ((b.p99Seconds ?? 0) > (a.p99Seconds ?? 0) ? b : a));
  const p99 = worst.p99Seconds ?? 0;
  const timeout = worst.timeoutSeconds ?? probe.timing.timeoutSeconds;
  if (p99 < NEAR_TIMEOUT_SHARE * timeout) return undefined;
  const timeouts = sum(of.map((s) => s.failures.timeout ?? 0));
  const load = callerLoad.find((l) => l.pod === worst.pod && l.requests >= LOADED_REQUESTS);
  if (load !== undefined) {
    // Not a slow probe: a flood past the mesh (docs/security.md#under-load). No patch: the timing is not the fault.
    return finding(c, probe.kind, 'caller-load', {
      evidence: `${probe.kind} p99 ${ms(p99)} (pod ${worst.pod}) against timeoutSeconds ${timeout} ${span}, while its companion answered or shed ${Math.round(load.requests)} requests and connections of callers other than kubelet (shared checks, cut or evicted connections): the durations measure that load, not the probe`,
      change: undefined,
      advice: `find the caller flooding ${worst.pod}'s 15901-15904 (docs/monitoring.md#osmhealthcheckcallerload); judge ${probe.kind}'s timing again once it stops`,
    });
  }
  const next = Math.max(timeout + 1, Math.ceil(p99 * 2));
  return finding(c, probe.kind, 'near-timeout', {
    evidence: `${probe.kind} p99 ${ms(p99)} (pod ${worst.pod}) against timeoutSeconds ${timeout} ${span}, ${timeouts} timeout${timeouts === 1 ? '' : 's'} in ${count} probes`,
    change: { [`${probe.kind}Probe`]: { timeoutSeconds: next } },
    advice: `timeoutSeconds ${next}, twice the p99, or make ${probe.check} answer faster`,
  });
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const clock = (at: number) => new Date(at).toISOString().slice(11, 16);
const quoted = (text: string) => JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);

/** Per pod of one container, what says its liveness failed: the companion's counts and kubelet's events. */
function blame(c: ContainerProbes, w: WorkloadSamples, of: readonly ProbeSample[]) {
  const events = w.events.filter((e) => e.container === c.container);
  const blamed = (pod: string) =>
    sum(of.filter((s) => s.pod === pod).map(failuresOf)) > 0 || events.some((e) => e.pod === pod);
  const restarted = w.containers.filter((s) => s.container === c.container && s.restarts > 0);
  return { events, blamed: restarted.filter((s) => blamed(s.pod)) };
}

/** `3 restarts of app on 1 pod over the last 5m (last: Error, exit 137)`, or counted by the pods' restartCount. */
function restartsText(c: ContainerProbes, restarted: readonly ContainerSample[], span: string | undefined) {
  const restarts = sum(restarted.map((s) => s.restarts));
  const last = restarted.find((s) => s.lastTermination !== undefined)?.lastTermination;
  const head = `${plural(restarts, 'restart')} of ${c.container} on ${plural(restarted.length, 'pod')}`;
  if (overTheWindow(restarted, span)) return `${head} ${span}${last === undefined ? '' : ` (last: ${last})`}`;
  const ended = Math.max(...restarted.map((s) => s.lastEndedAt ?? Number.NEGATIVE_INFINITY));
  const when = Number.isFinite(ended) ? `, the last ended ${clock(ended)} UTC` : '';
  return `${head} (restartCount${when}${last === undefined ? '' : `: ${last}`})`;
}

/** Every restart counted over the live source's window (Prometheus): the counts of both share one span. */
const overTheWindow = (restarted: readonly ContainerSample[], span: string | undefined): span is string =>
  span !== undefined && restarted.every((s) => s.counted === 'over the window');

function livenessRestarts(
  c: ContainerProbes,
  probe: ContainerProbe,
  w: WorkloadSamples,
  of: readonly ProbeSample[],
) {
  const { events, blamed } = blame(c, w, of);
  if (blamed.length === 0) return undefined;
  const failed = sum(of.map(failuresOf));
  const kills = sum(events.map((e) => e.kills));
  const unhealthy = sum(events.map((e) => e.failures));
  const message = events.find((e) => e.message !== undefined)?.message;
  const said = [
    failed === 0
      ? undefined
      : `${failed} liveness failures in ${sum(of.map((s) => s.count))} probes${overTheWindow(blamed, w.span) ? '' : ` ${w.span ?? ''}`}: ${reasons(of)}`,
    kills + unhealthy === 0
      ? undefined
      : `kubelet's events: ${kills} Killing for failed liveness, ${unhealthy} Unhealthy${message === undefined ? '' : ` (last: ${quoted(message)})`}`,
  ].filter((s) => s !== undefined);
  const threshold = Math.max(probe.timing.failureThreshold * 2, livenessThreshold(probe.timing, undefined));
  const timeouts = sum(of.map((s) => s.failures.timeout ?? 0)) + sum(events.map((e) => e.timeouts));
  const timeoutSeconds = timeouts > 0 ? { timeoutSeconds: probe.timing.timeoutSeconds * 2 } : {};
  return {
    ...finding(c, 'liveness', 'liveness-restarts', {
      evidence: `${restartsText(c, blamed, w.span)}, and ${said.join('; ')}`,
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
  if (longest <= BOOT_SHARE * allowed) return undefined;
  // The budget at which the slowest boot uses exactly BOOT_SHARE of it, in whole periods: flagged no more.
  const failureThreshold = Math.ceil(longest / BOOT_SHARE / t.periodSeconds);
  const startupProbe =
    probe.kind === 'startup'
      ? { failureThreshold }
      : {
          ...probe.action,
          periodSeconds: t.periodSeconds,
          timeoutSeconds: t.timeoutSeconds,
          failureThreshold,
        };
  const share = Math.round((100 * longest) / allowed);
  return finding(c, probe.kind, 'startup-budget', {
    evidence: `the slowest of ${plural(boots.length, 'start')} seen took ${Math.round(longest)} s to its first ${probe.kind} success, ${share}% of a budget of ${allowed} s (initialDelaySeconds ${t.initialDelaySeconds} + ${t.periodSeconds} s x ${t.failureThreshold})`,
    change: { startupProbe },
    advice: `a startup probe whose budget the slowest start uses at most ${100 * BOOT_SHARE}% of: ${t.periodSeconds} s x ${failureThreshold}`,
  });
}

/** The fix of a liveness probe that checks its dependencies: a TCP check of the same port (the process alone). */
function processCheck(probe: ContainerProbe) {
  const port = (probe.action.httpGet ?? probe.action.grpc) as { port?: unknown } | undefined;
  return port?.port === undefined
    ? undefined
    : { livenessProbe: { httpGet: null, grpc: null, tcpSocket: { port: port.port } } };
}
const SHARED_ADVICE =
  'liveness should check the process alone (that it accepts connections), readiness the dependencies';

/** From Prometheus' steps: one step in which every replica's liveness failed. */
function sharedInSteps(c: ContainerProbes, probe: ContainerProbe, w: WorkloadSamples) {
  const steps = (w.windows ?? []).filter((s) => s.container === c.container);
  const shared = steps.filter((s) => {
    const counts = Object.values(s.pods);
    return counts.length >= 2 && counts.every((n) => n > 0);
  });
  if (shared.length === 0) return undefined;
  const first = shared[0] as FailureWindow;
  const replicas = Object.keys(first.pods).length;
  return finding(c, 'liveness', 'shared-dependency', {
    evidence: `liveness failed on all ${replicas} replicas in ${shared.length} of ${steps.length} steps ${w.span ?? ''} (Prometheus' steps; first ${clock(first.from * 1000)}-${clock(first.to * 1000)} UTC, ${sum(Object.values(first.pods))} failures): a dependency they share, not the pods`,
    change: processCheck(probe),
    advice: SHARED_ADVICE,
  });
}

/**
 * From kubelet's record, with no time steps: a span of SHARED_SPAN_MS that holds a liveness restart of every
 * replica (when kubelet killed it, by its events; when the last restart ended, by the pod's status, where liveness
 * is blamed on that pod).
 */
function sharedInRecord(
  c: ContainerProbes,
  probe: ContainerProbe,
  w: WorkloadSamples,
  of: readonly ProbeSample[],
) {
  if (w.pods.length < 2) return undefined;
  const { events, blamed } = blame(c, w, of);
  const times = [
    ...events.flatMap((e) => e.killedAt.map((at) => ({ pod: e.pod, at, from: "kubelet's events" }))),
    ...blamed.flatMap((s) =>
      s.lastEndedAt === undefined ? [] : [{ pod: s.pod, at: s.lastEndedAt, from: "the pods' status" }],
    ),
  ].sort((a, b) => a.at - b.at);
  const run = allWithin(times, w.pods, SHARED_SPAN_MS);
  if (run === undefined) return undefined;
  const [from, to] = [run[0]?.at ?? 0, run[run.length - 1]?.at ?? 0];
  const sources = [...new Set(run.map((t) => t.from))].sort().join(' and ');
  const minutes = Math.max(1, Math.ceil((to - from) / 60_000));
  return finding(c, 'liveness', 'shared-dependency', {
    evidence: `liveness restarted all ${w.pods.length} replicas within ${minutes} min (${clock(from)}-${clock(to)} UTC, restart times from ${sources}): a dependency they share, not the pods`,
    change: processCheck(probe),
    advice: SHARED_ADVICE,
  });
}

/** The first run of `times` (sorted by `at`) no longer than `ms` that holds a time of every pod, else undefined. */
export function allWithin<T extends { pod: string; at: number }>(
  times: readonly T[],
  pods: readonly string[],
  ms: number,
): T[] | undefined {
  const wanted = new Set(pods);
  const held = new Map<string, number>();
  let first = 0;
  for (let last = 0; last < times.length; last++) {
    const { pod, at } = times[last] as T;
    if (wanted.has(pod)) held.set(pod, (held.get(pod) ?? 0) + 1);
    for (let old = times[first] as T; at - old.at > ms; old = times[++first] as T) {
      const left = (held.get(old.pod) ?? 0) - 1;
      if (left > 0) held.set(old.pod, left);
      else held.delete(old.pod);
    }
    if (held.size !== wanted.size) continue;
    // The run from its first time on, to the last that still falls within `ms` of it: all it holds.
    let end = last + 1;
    while (end < times.length && (times[end] as T).at - (times[first] as T).at <= ms) end++;
    return times.slice(first, end);
  }
  return undefined;
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
    found.push(nearTimeout(c, probe, of, w.span ?? '', w.callerLoad ?? []));
    if (probe.kind === 'liveness') {
      found.push(
        livenessRestarts(c, probe, w, of),
        sharedInSteps(c, probe, w) ?? sharedInRecord(c, probe, w, of),
      );
    }
  }
  found.push(startupBudget(c, w));
  return found.filter((f): f is Finding => f !== undefined);
}
