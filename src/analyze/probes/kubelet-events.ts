// Kubelet's events on pods that blame a liveness probe, as `kubectl describe pod` shows them: `Unhealthy`
// ("Liveness probe failed: HTTP probe failed with statuscode: 500") for each failure, `Killing` ("Container app
// failed liveness probe, will be restarted") for each restart it made. With a pod's status, they attribute
// restarts to liveness with no live source. The API server keeps events for its --event-ttl (1 h by default),
// so an older restart has none left. Reading is two lists through the `List` seam; the rest is pure.

import { asObject, type Json } from '../json.js';
import type { ListOutcome } from '../paged-list.js';
import type { List } from './workload-probes.js';

/** The API server's default --event-ttl: kubelet's events are gone an hour after their last update. */
export const EVENT_TTL_MS = 3_600_000;

/** What kubelet recorded against liveness on one container of one pod, within the window. */
export interface LivenessEvents {
  namespace: string;
  pod: string;
  container: string;
  /** Restarts kubelet made for a failed liveness probe (`Killing`). */
  kills: number;
  /** When it made them: each Killing event's first and last time (ms), as aggregation keeps only those. */
  killedAt: number[];
  /** Failed liveness probes (`Unhealthy`), and those of them that ran out of time. */
  failures: number;
  timeouts: number;
  /** The latest Unhealthy message: what the probe got. */
  message: string | undefined;
}

/** One event, read: which container, what it says of liveness, how many times, when. */
interface Read {
  key: string;
  namespace: string;
  pod: string;
  container: string;
  kill: boolean;
  count: number;
  first: number;
  last: number;
  message: string;
}

// kubelet's pkg/kubelet/kuberuntime: "Container %s failed liveness probe, will be restarted";
// pkg/kubelet/prober: "%s probe failed: %s" and "%s probe errored: %s", with the probe type capitalised.
const KILLED = /^Container (\S+) failed liveness probe\b/;
const UNHEALTHY = /^Liveness probe (failed|errored): /;
const FIELD_PATH = /^spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]+)\}$/;
// The HTTP prober's timeout ("Client.Timeout exceeded", "context deadline exceeded"), TCP's and gRPC's ("timeout").
const TIMED_OUT = /timeout|deadline exceeded/i;

const time = (value: unknown) => (typeof value === 'string' ? Date.parse(value) : Number.NaN);
const firstOf = (...values: number[]) => values.find((v) => Number.isFinite(v)) ?? Number.NaN;

/** One event as liveness evidence within the window (its last occurrence at or after `since`), else undefined. */
export function readEvent(event: Json, since: number): Read | undefined {
  const object = asObject(event.involvedObject);
  const message = typeof event.message === 'string' ? event.message : '';
  const kill = event.reason === 'Killing' && KILLED.test(message);
  if (object.kind !== 'Pod' || !(kill || (event.reason === 'Unhealthy' && UNHEALTHY.test(message))))
    return undefined;
  const container =
    FIELD_PATH.exec(String(object.fieldPath ?? ''))?.[1] ?? (kill ? KILLED.exec(message)?.[1] : undefined);
  if (typeof object.name !== 'string' || typeof object.namespace !== 'string' || container === undefined)
    return undefined;
  // core/v1 events carry first/lastTimestamp and count; those written through events.k8s.io/v1, eventTime and series.
  const series = asObject(event.series);
  const created = time(asObject(event.metadata).creationTimestamp);
  const last = firstOf(
    time(event.lastTimestamp),
    time(series.lastObservedTime),
    time(event.eventTime),
    created,
  );
  const first = firstOf(time(event.firstTimestamp), time(event.eventTime), last);
  if (!(last >= since)) return undefined;
  const counted = typeof event.count === 'number' ? event.count : series.count;
  // An event aggregated since before the window counts once: when its other occurrences were is not kept.
  const count = first >= since && typeof counted === 'number' && counted > 0 ? counted : 1;
  return {
    key: `${object.namespace}/${object.name}/${container}`,
    namespace: object.namespace,
    pod: object.name,
    container,
    kill,
    count,
    first,
    last,
    message,
  };
}

/** The events, read, summed per container of a pod. */
export function livenessEvents(events: readonly Json[], since: number): LivenessEvents[] {
  const by = new Map<string, LivenessEvents & { latest: number }>();
  for (const event of events) {
    const e = readEvent(event, since);
    if (e === undefined) continue;
    let seen = by.get(e.key);
    if (seen === undefined) {
      seen = {
        namespace: e.namespace,
        pod: e.pod,
        container: e.container,
        kills: 0,
        killedAt: [],
        failures: 0,
        timeouts: 0,
        message: undefined,
        latest: Number.NEGATIVE_INFINITY,
      };
      by.set(e.key, seen);
    }
    if (e.kill) {
      seen.kills += e.count;
      // Only the times within the window: an event aggregated since before it was also a kill at its last time.
      seen.killedAt.push(...new Set([e.first, e.last].filter((at) => at >= since)));
    } else {
      seen.failures += e.count;
      if (TIMED_OUT.test(e.message)) seen.timeouts += e.count;
      if (e.last >= seen.latest) {
        seen.latest = e.last;
        seen.message = e.message;
      }
    }
  }
  return [...by.values()].map(({ latest: _, ...e }) => ({
    ...e,
    killedAt: e.killedAt.sort((a, b) => a - b),
  }));
}

/**
 * Kubelet's liveness events in scope since `since`: two lists narrowed by the API server's field selectors
 * (reason and involvedObject.kind), so a cluster's other events are not read.
 */
export async function readLivenessEvents(
  list: List,
  namespace: string | undefined,
  since: number,
): Promise<{ events: LivenessEvents[]; refused: string | undefined }> {
  const root = namespace === undefined ? '/api/v1/events' : `/api/v1/namespaces/${namespace}/events`;
  const items: Json[] = [];
  const keep = (event: Json) => {
    if (readEvent(event, since) !== undefined) items.push(event);
  };
  for (const reason of ['Killing', 'Unhealthy']) {
    const selector = encodeURIComponent(`involvedObject.kind=Pod,reason=${reason}`);
    const outcome: ListOutcome = await list(`${root}?fieldSelector=${selector}`, keep);
    if (!outcome.ok) {
      const scope = namespace === undefined ? 'in all namespaces' : `in namespace ${namespace}`;
      return { events: [], refused: `cannot list events ${scope}: ${outcome.message}` };
    }
  }
  return { events: livenessEvents(items, since), refused: undefined };
}
