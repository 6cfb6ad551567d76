// Every workload's findings: the static rules over its template, the live rules over kubelet's record of its
// pods (their status, its events) and the samples of its pods where there are samples, each finding with its own
// fix, and the workload's fixes merged into one. Pure.

import type { Workload } from '../workloads.js';
import type { Finding } from './finding.js';
import { fixText } from './fix.js';
import { EVENT_TTL_MS, type LivenessEvents } from './kubelet-events.js';
import { liveFindings, type WorkloadSamples } from './live-rules.js';
import { type ContainerChange, mergeChanges } from './merged-change.js';
import type { ContainerSample, Samples } from './samples.js';
import { staticFindings } from './static-rules.js';
import type { WorkloadProbes } from './workload-probes.js';

export interface ReportedFinding extends Finding {
  /** This finding's own `kubectl patch` or YAML snippet; undefined where the rule can give no value. */
  fix: string | undefined;
}

export interface WorkloadFindings extends Workload {
  pods: number;
  /** The companion's table was read: its original probes were judged, and its live data could be. */
  companion: boolean;
  findings: ReportedFinding[];
  /** Every finding's change, merged per container: what the one fix sets. */
  changes: ContainerChange[];
  /** The one `kubectl patch` (or YAML snippet) that makes every change; undefined where there is none. */
  fix: string | undefined;
}

/** What kubelet recorded in scope: restarts from the pods' status, and its liveness events. */
export interface KubeletRecord {
  containers: readonly ContainerSample[];
  events: readonly LivenessEvents[];
  /** Why the events could not be read (`cannot list events ...`), else undefined. */
  eventsRefused: string | undefined;
}

/** `over the last 1h`, or `since each companion started`. */
export function spanOf(samples: Samples): string {
  if (samples.windowSeconds === undefined) return 'since each companion started';
  const s = samples.windowSeconds;
  return `over the last ${s % 3600 === 0 ? `${s / 3600}h` : s % 60 === 0 ? `${s / 60}m` : `${s}s`}`;
}

function narrowed(w: WorkloadProbes, samples: Samples | undefined, record: KubeletRecord): WorkloadSamples {
  const pods = new Set(w.pods);
  const mine = <T extends { namespace: string; pod: string }>(s: T) =>
    s.namespace === w.namespace && pods.has(s.pod);
  // A restart is counted by kube-state-metrics over the window where Prometheus has it, else by the pod's status;
  // when and how the last one ended, by the pod's status.
  const status = new Map(record.containers.filter(mine).map((c) => [`${c.pod}/${c.container}`, c]));
  const counted = new Map(status);
  for (const c of samples?.containers.filter(mine) ?? []) {
    const id = `${c.pod}/${c.container}`;
    const own = status.get(id);
    if (c.restarts > 0 || own === undefined) {
      counted.set(id, {
        ...c,
        lastTermination: own?.lastTermination ?? c.lastTermination,
        lastEndedAt: own?.lastEndedAt,
      });
    }
  }
  return {
    pods: w.pods,
    probes: samples?.probes.filter(mine) ?? [],
    containers: [...counted.values()],
    events: record.events.filter(mine),
    windows: samples?.windows
      ?.filter((s) => s.namespace === w.namespace)
      .map((s) => ({
        ...s,
        pods: Object.fromEntries(Object.entries(s.pods).filter(([pod]) => pods.has(pod))),
      }))
      .filter((s) => Object.keys(s.pods).length > 0),
    span: samples === undefined ? undefined : spanOf(samples),
    callerLoad: samples?.callerLoad?.filter(mine),
  };
}

/**
 * Restarts within the window that nothing attributes: said where the reason is that the record is gone (events
 * older than the API server keeps them) or unreadable, not where the record shows a crash or an OOM kill.
 */
function unattributed(
  w: WorkloadProbes,
  live: WorkloadSamples,
  findings: readonly Finding[],
  record: KubeletRecord,
  now: number,
): string[] {
  const blamed = new Set(findings.filter((f) => f.rule === 'liveness-restarts').map((f) => f.container));
  const failed = (s: ContainerSample) =>
    live.probes.some(
      (p) => p.pod === s.pod && p.container === s.container && Object.values(p.failures).some((n) => n > 0),
    );
  const probed = new Set(w.probes.containers.filter((c) => c.probes.liveness).map((c) => c.container));
  const open = live.containers.filter(
    (s) =>
      s.restarts > 0 &&
      probed.has(s.container) &&
      !blamed.has(s.container) &&
      !failed(s) &&
      !/OOMKilled/.test(s.lastTermination ?? ''),
  );
  if (open.length === 0) return [];
  const name = `${w.namespace}/${w.kind}/${w.name}`;
  if (record.eventsRefused !== undefined)
    return [
      `${name}: restarts of ${containersOf(open)} stand unattributed: kubelet's events could not be read`,
    ];
  const gone = open.filter((s) => s.lastEndedAt !== undefined && now - s.lastEndedAt > EVENT_TTL_MS);
  if (gone.length === 0) return [];
  return [
    `${name}: restarts of ${containersOf(gone)} stand unattributed: they ended over an hour ago, and kubelet's events live 1 h by default (the API server's --event-ttl)`,
  ];
}

const containersOf = (samples: readonly ContainerSample[]) =>
  [...new Set(samples.map((s) => `${s.container} on ${s.pod}`))].join(', ');

export function judge(
  workloads: readonly WorkloadProbes[],
  record: KubeletRecord,
  samples: Samples | undefined,
  now: number,
): { workloads: WorkloadFindings[]; notes: string[] } {
  const notes: string[] = [];
  const judged = workloads.map((w) => {
    const live = narrowed(w, samples, record);
    const found = w.probes.containers.flatMap((c) =>
      [...staticFindings(c, w.behindService), ...liveFindings(c, live)].map((f) => ({ ...f, list: c.list })),
    );
    notes.push(...unattributed(w, live, found, record, now));
    const own = found.flatMap(({ list, container, change }) =>
      change === undefined ? [] : [{ list, container, change }],
    );
    const changes = mergeChanges(own);
    const findings = found.map(({ list, ...f }) => ({
      ...f,
      fix:
        f.change === undefined ? undefined : fixText(w, [{ list, container: f.container, change: f.change }]),
    }));
    return {
      namespace: w.namespace,
      kind: w.kind,
      name: w.name,
      pods: w.pods.length,
      companion: w.probes.companion,
      findings,
      changes,
      fix: changes.length === 0 ? undefined : fixText(w, changes),
    };
  });
  return { workloads: judged, notes };
}
