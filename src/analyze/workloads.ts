// The workload a pod belongs to, by its controller's ownerReference (ReplicaSet -> Deployment, Job -> CronJob, as
// `kubectl rollout` and `kubectl get` name them), and the one command that gives its pods the companion again:
// a new pod goes through the webhook, a running one never does.

import type { ClassName } from './classify.js';
import { asObject } from './json.js';
import type { Json } from './kube-client.js';

export interface Owner {
  kind: string;
  name: string;
}

/** A pod's workload: the top controller analyze knows of, or the pod itself. */
export interface Workload {
  namespace: string;
  kind: string;
  name: string;
}

/** The controller among an object's ownerReferences (the one `controller: true`), if any. */
export function controllerOf(object: Json): Owner | undefined {
  const refs = asObject(object.metadata).ownerReferences;
  if (!Array.isArray(refs)) return undefined;
  const ref = refs.map(asObject).find((r) => r.controller === true);
  return typeof ref?.kind === 'string' && typeof ref.name === 'string'
    ? { kind: ref.kind, name: ref.name }
    : undefined;
}

/** `namespace/kind/name`: the key of a ReplicaSet or Job in the parents map. */
export const ownerKey = (namespace: string, owner: Owner) => `${namespace}/${owner.kind}/${owner.name}`;

/**
 * The workload of a pod in `namespace` whose controller is `owner`: a ReplicaSet's Deployment and a Job's CronJob
 * where `parents` knows them (ReplicaSets and Jobs read from the cluster), else the controller, else the pod.
 */
export function workloadOf(
  namespace: string,
  podName: string,
  owner: Owner | undefined,
  parents: ReadonlyMap<string, Owner>,
): Workload {
  if (owner === undefined) return { namespace, kind: 'Pod', name: podName };
  const parent = parents.get(ownerKey(namespace, owner));
  const top =
    parent !== undefined &&
    ((owner.kind === 'ReplicaSet' && parent.kind === 'Deployment') ||
      (owner.kind === 'Job' && parent.kind === 'CronJob'))
      ? parent
      : owner;
  return { namespace, kind: top.kind, name: top.name };
}

const ROLLOUT_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

/**
 * The command that fixes a group of pods of one workload in one class, or undefined where nothing is to be done.
 * `pods` are the group's pod names.
 */
export function fixCommand(
  workload: Workload,
  found: ClassName,
  pods: readonly string[],
): string | undefined {
  const ns = `kubectl -n ${workload.namespace}`;
  const kind = workload.kind.toLowerCase();
  if (found === 'covered' || found === 'untouched') return undefined;
  if (found === 'failing') {
    // Nothing to restart: why the companion ends is in its last log and its pod's events.
    return `${ns} logs ${pods[0]} -c osm-healthcheck --previous; ${ns} describe pod ${pods[0]}`;
  }
  if (ROLLOUT_KINDS.has(workload.kind)) return `${ns} rollout restart ${kind}/${workload.name}`;
  if (workload.kind === 'CronJob') {
    // Its next run is injected anyway; this starts one now.
    return `${ns} create job --from=cronjob/${workload.name} ${workload.name}-rerun`;
  }
  // A bare pod has no controller to make a new one: replace it with itself, through admission.
  if (workload.kind === 'Pod') return `${ns} get pod ${workload.name} -o yaml | kubectl replace --force -f -`;
  // A ReplicaSet, a Job or another controller makes new pods for those deleted, and the webhook sees those.
  return `${ns} delete pod ${pods.join(' ')}`;
}
