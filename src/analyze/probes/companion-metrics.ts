// analyze --probes --companion-metrics: one read of each companion's /metrics through the API server's pod proxy
// (GET pods/proxy: a grant that reaches every port of every pod, docs/security.md), bounded: at most `maxPods`
// companions, a few at a time, each answer capped by the client, and no batch started once the run's budget is
// spent. Counts run since each companion started.

import { exposedCallerLoad, exposedSamples } from './exposition.js';
import type { CallerLoad, ProbeSample, Samples } from './samples.js';

/** The companion's metrics port (scheme.ts DEFAULT_PORTS.healthcheck): the PodMonitor's `osm-hc-health`. */
const METRICS_PORT = 15904;
const AT_ONCE = 4;
/** The whole read's budget: a cluster of slow or unanswering pods must not hold a report (or its CronJob) for long. */
export const READ_BUDGET_MS = 60_000;

export type GetText = (path: string) => Promise<{ ok: true; text: string } | { ok: false; message: string }>;

export async function companionSamples(
  getText: GetText,
  pods: readonly { namespace: string; pod: string }[],
  maxPods: number,
  budget: { ms: number; now: () => number } = { ms: READ_BUDGET_MS, now: Date.now },
): Promise<{ samples: Samples; notes: string[] }> {
  const chosen = pods.slice(0, maxPods);
  const probes: ProbeSample[] = [];
  const callerLoad: CallerLoad[] = [];
  const failed: string[] = [];
  const deadline = budget.now() + budget.ms;
  let asked = 0;
  for (let i = 0; i < chosen.length && budget.now() < deadline; i += AT_ONCE) {
    asked = Math.min(chosen.length, i + AT_ONCE);
    await Promise.all(
      chosen.slice(i, i + AT_ONCE).map(async ({ namespace, pod }) => {
        const reply = await getText(
          `/api/v1/namespaces/${namespace}/pods/${pod}:${METRICS_PORT}/proxy/metrics`,
        );
        if (reply.ok) {
          probes.push(...exposedSamples(reply.text, namespace, pod));
          callerLoad.push(exposedCallerLoad(reply.text, namespace, pod));
        } else failed.push(`${namespace}/${pod}: ${reply.message}`);
      }),
    );
  }
  const notes = [
    "without Prometheus: counts since each companion started; restarts from the pods' status and kubelet's events",
  ];
  if (asked < chosen.length)
    notes.push(`asked ${asked} of ${pods.length} companions before the ${budget.ms / 1000} s budget ran out`);
  else if (pods.length > chosen.length)
    notes.push(`read ${chosen.length} of ${pods.length} companions (--companion-metrics ${maxPods})`);
  if (failed.length > 0) notes.push(`${failed.length} companion(s) unread: ${failed.slice(0, 3).join('; ')}`);
  return {
    samples: {
      source: "the companions' /metrics (pod proxy)",
      windowSeconds: undefined,
      probes,
      containers: [],
      windows: undefined,
      callerLoad,
    },
    notes,
  };
}
