// The pods in scope reduced to what --probes judges: per workload (workloads.ts), its pods' names, the probes of
// its first running pod (the template as the webhook rewrote it), whether a Service selects it, and each
// container's restarts in the window from the pods' status. Reads through a narrow seam (`List`), so the client
// behind it can change.

import { asList, asObject, type Json, nameOf, namespaceOf, stringMap } from '../json.js';
import type { ListOutcome } from '../paged-list.js';
import { controllerOf, type Owner, ownerKey, type Workload, workloadOf } from '../workloads.js';
import { type PodProbes, podProbes } from './pod-probes.js';
import type { ContainerSample } from './samples.js';

/** Every item of a collection path to `each`, page by page (paged-list.ts eachItem over analyze's client). */
export type List = (path: string, each: (item: Json) => void, metadataOnly?: boolean) => Promise<ListOutcome>;

export interface WorkloadProbes extends Workload {
  pods: string[];
  probes: PodProbes;
  behindService: boolean;
}

export interface ProbeInventory {
  workloads: WorkloadProbes[];
  /** Restarts within the window that each pod's status shows (its last termination). */
  containers: ContainerSample[];
  /** Reads the API server refused: `list services in namespace x: forbidden`. */
  refused: string[];
}

const collection = (root: string, resource: string, namespace: string | undefined) =>
  namespace === undefined ? `${root}/${resource}` : `${root}/namespaces/${namespace}/${resource}`;

/**
 * The containers whose last termination ended within the window, from one pod's status: the pod's own
 * restartCount, and when and how the last one ended (kubelet keeps only the last).
 */
export function restartsOf(pod: Json, since: number): ContainerSample[] {
  const status = asObject(pod.status);
  return [...asList(status.initContainerStatuses), ...asList(status.containerStatuses)].flatMap((s) => {
    const ended = asObject(asObject(s.lastState).terminated);
    const at = Date.parse(String(ended.finishedAt ?? ''));
    if (!(at >= since) || typeof s.name !== 'string') return [];
    const reason = `${String(ended.reason ?? 'terminated')}, exit ${String(ended.exitCode ?? '?')}`;
    const count = typeof s.restartCount === 'number' && s.restartCount > 0 ? s.restartCount : 1;
    return [
      {
        namespace: namespaceOf(pod),
        pod: nameOf(pod),
        container: s.name,
        restarts: count,
        counted: 'restartCount' as const,
        lastTermination: reason,
        lastEndedAt: at,
      },
    ];
  });
}

export async function readProbeInventory(
  list: List,
  namespace: string | undefined,
  since: number,
): Promise<ProbeInventory> {
  const refused: string[] = [];
  const scope = namespace === undefined ? 'in all namespaces' : `in namespace ${namespace}`;
  const note = (outcome: ListOutcome, what: string) => {
    if (!outcome.ok) refused.push(`cannot list ${what} ${scope}: ${outcome.message}`);
  };
  const parents = new Map<string, Owner>();
  for (const [root, resource, kind] of [
    ['/apis/apps/v1', 'replicasets', 'ReplicaSet'],
    ['/apis/batch/v1', 'jobs', 'Job'],
  ] as const) {
    const keep = (o: Json) => {
      const owner = controllerOf(o);
      if (owner !== undefined) parents.set(ownerKey(namespaceOf(o), { kind, name: nameOf(o) }), owner);
    };
    note(await list(collection(root, resource, namespace), keep, true), resource);
  }
  const selectors: { namespace: string; selector: Record<string, string> }[] = [];
  const keepService = (s: Json) => {
    const selector = stringMap(asObject(s.spec).selector);
    if (Object.keys(selector).length > 0) selectors.push({ namespace: namespaceOf(s), selector });
  };
  note(await list(collection('/api/v1', 'services', namespace), keepService), 'services');
  const workloads = new Map<string, WorkloadProbes>();
  const containers: ContainerSample[] = [];
  const keepPod = (pod: Json) => {
    const phase = asObject(pod.status).phase;
    if (phase === 'Succeeded' || phase === 'Failed' || asObject(pod.metadata).deletionTimestamp !== undefined)
      return;
    const ns = namespaceOf(pod);
    const labels = stringMap(asObject(pod.metadata).labels);
    const selected = selectors.some(
      (s) => s.namespace === ns && Object.entries(s.selector).every(([k, v]) => labels[k] === v),
    );
    const workload = workloadOf(ns, nameOf(pod), controllerOf(pod), parents);
    const id = `${ns}/${workload.kind}/${workload.name}`;
    const known = workloads.get(id);
    if (known === undefined) {
      workloads.set(id, {
        ...workload,
        pods: [nameOf(pod)],
        probes: podProbes(asObject(pod.spec)),
        behindService: selected,
      });
    } else {
      known.pods.push(nameOf(pod));
      known.behindService ||= selected;
    }
    containers.push(...restartsOf(pod, since));
  };
  note(await list(collection('/api/v1', 'pods', namespace), keepPod), 'pods');
  return { workloads: [...workloads.values()], containers, refused };
}
