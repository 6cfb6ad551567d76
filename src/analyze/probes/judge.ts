// Every workload's findings: the static rules over its template, the live rules over the samples of its pods
// (where there are samples), each finding with its fix as a command. Pure.

import type { Workload } from '../workloads.js';
import type { Finding } from './finding.js';
import { fixText } from './fix.js';
import { liveFindings, type WorkloadSamples } from './live-rules.js';
import type { ContainerSample, Samples } from './samples.js';
import { staticFindings } from './static-rules.js';
import type { WorkloadProbes } from './workload-probes.js';

export interface ReportedFinding extends Finding {
  /** The `kubectl patch` or the YAML snippet; undefined where the rule can give no value. */
  fix: string | undefined;
}

export interface WorkloadFindings extends Workload {
  pods: number;
  /** The companion's table was read: its original probes were judged, and its live data could be. */
  companion: boolean;
  findings: ReportedFinding[];
}

/** `over the last 1h`, or `since each companion started`. */
export function spanOf(samples: Samples): string {
  if (samples.windowSeconds === undefined) return 'since each companion started';
  const s = samples.windowSeconds;
  return `over the last ${s % 3600 === 0 ? `${s / 3600}h` : s % 60 === 0 ? `${s / 60}m` : `${s}s`}`;
}

function narrowed(
  w: WorkloadProbes,
  samples: Samples,
  statusRestarts: readonly ContainerSample[],
): WorkloadSamples {
  const pods = new Set(w.pods);
  const mine = <T extends { namespace: string; pod: string }>(s: T) =>
    s.namespace === w.namespace && pods.has(s.pod);
  // A restart is known from kube-state-metrics over the window, else from the pod's last termination.
  const containers = new Map<string, ContainerSample>();
  for (const c of [...statusRestarts.filter(mine), ...samples.containers.filter(mine)]) {
    const id = `${c.pod}/${c.container}`;
    const seen = containers.get(id);
    if (seen === undefined || c.restarts > seen.restarts) {
      containers.set(id, { ...c, lastTermination: c.lastTermination ?? seen?.lastTermination });
    }
  }
  return {
    probes: samples.probes.filter(mine),
    containers: [...containers.values()],
    windows: samples.windows
      ?.filter((s) => s.namespace === w.namespace)
      .map((s) => ({
        ...s,
        pods: Object.fromEntries(Object.entries(s.pods).filter(([pod]) => pods.has(pod))),
      }))
      .filter((s) => Object.keys(s.pods).length > 0),
    span: spanOf(samples),
  };
}

export function judge(
  workloads: readonly WorkloadProbes[],
  statusRestarts: readonly ContainerSample[],
  samples: Samples | undefined,
): WorkloadFindings[] {
  return workloads.map((w) => {
    const live = samples === undefined ? undefined : narrowed(w, samples, statusRestarts);
    const findings = w.probes.containers.flatMap((c) =>
      [...staticFindings(c, w.behindService), ...(live === undefined ? [] : liveFindings(c, live))].map(
        (f) => ({
          ...f,
          fix: f.change === undefined ? undefined : fixText(w, c.list, c.container, f.change),
        }),
      ),
    );
    return {
      namespace: w.namespace,
      kind: w.kind,
      name: w.name,
      pods: w.pods.length,
      companion: w.probes.companion,
      findings,
    };
  });
}
