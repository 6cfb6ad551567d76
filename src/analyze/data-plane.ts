// The data plane: every pod the webhook sees (its namespaceSelector and objectSelector), and every pod anywhere in
// scope that carries our companion, each in one class (classify.ts), grouped by workload with the command that
// fixes the group. Lists are read page by page and each pod is reduced to its name in a group before the next
// page is asked for, so memory grows with the number of groups and pod names, not with the pods' specs.

import { keptNamespace } from '../cluster/namespace-policies.js';
import { clusterKnowledge, rewriteOptionsFor } from '../cluster/view.js';
import type { EnforcedPolicy } from '../rewrite/pod-security.js';
import type { RewriteOptions } from '../rewrite/types.js';
import { type Check, refused } from './checks.js';
import {
  CLASSES,
  type ClassName,
  type Current,
  classifyPod,
  needsAction,
  type PodClass,
  podLabels,
  type UntouchedReason,
} from './classify.js';
import {
  NO_RULES,
  readKubelets,
  readNamespaceRules,
  type ServerVersion,
  snapshotView,
} from './cluster-reads.js';
import { asObject, nameOf, namespaceOf } from './json.js';
import type { ClusterClient, Json } from './kube-client.js';
import { type LabelSelector, matchesSelector } from './label-selector.js';
import { eachItem } from './paged-list.js';
import { AGENT_SELECTOR, type SealReport, SealTally } from './seal.js';
import { groupTableless, sortedTableless, type TablelessGroup, tablelessCompanions } from './tableless.js';
import type { WebhookSettings } from './webhook-settings.js';
import { controllerOf, fixCommand, type Owner, ownerKey, type Workload, workloadOf } from './workloads.js';

/** The webhook's selectors as deployed (or the manifests' defaults where it is not installed). */
export interface Selectors {
  namespace: LabelSelector | undefined;
  object: LabelSelector | undefined;
}

export interface Group extends Workload {
  class: ClassName;
  reason?: UntouchedReason;
  /** The first pod's detail: the others of the group share its class and reason. */
  detail: string;
  pods: string[];
  fix?: string;
  needsAction: boolean;
}

export interface NamespaceView {
  name: string;
  /** Its pods go through the webhook. */
  selected: boolean;
  podSecurity: string;
}

export interface DataPlane {
  namespaces: NamespaceView[];
  groups: Group[];
  counts: Record<ClassName, number>;
  /** Pods that ended (Succeeded, Failed) or are being deleted: nothing to inject or restart. */
  finished: number;
  checks: Check[];
  /** Workloads whose companion serves without a probe table (tableless.ts): listed, never needing action. */
  tableless: TablelessGroup[];
  /** The sealed mode per node (seal.ts); absent where no pod asked for the seal. */
  seal?: SealReport;
}

export interface DataPlaneInputs {
  client: ClusterClient;
  /** One namespace, or every one (-A). */
  namespace: string | undefined;
  selectors: Selectors;
  settings: WebhookSettings;
  current: Current;
  /** The images that are ours, by repository: the webhook's --image and this release's default. */
  ourImages: readonly string[];
  /** The API server's version. */
  serverVersion: ServerVersion;
  /** Nodes are read this many to a page: a node object carries its images. */
  nodePage?: number;
}

/** `/api/v1/pods` or `/api/v1/namespaces/NS/pods`. */
function collection(group: string, resource: string, namespace: string | undefined): string {
  const root = group === '' ? '/api/v1' : `/apis/${group}/v1`;
  return namespace === undefined ? `${root}/${resource}` : `${root}/namespaces/${namespace}/${resource}`;
}

/** A read of the data plane the API server refused (checks.ts). */
const cannot = (name: string, what: string, failed: { status: number; message: string }, right: string) =>
  refused('data-plane', name, what, failed, right);

type Namespaces = Map<string, { selected: boolean; policy: EnforcedPolicy }>;

export async function readDataPlane(inputs: DataPlaneInputs): Promise<DataPlane> {
  const { client, namespace, settings } = inputs;
  const checks: Check[] = [];
  const scope = namespace === undefined ? 'cluster-wide' : `in namespace ${namespace}`;
  const namespaces = await readNamespaces(inputs, checks);
  if (namespaces === undefined) return empty(checks);

  const { kubelets, listed: nodesListed } = await readKubelets(client, inputs.nodePage);
  if (!nodesListed.ok) checks.push(cannot('nodes', "the kubelets' versions", nodesListed, 'list nodes'));
  // Each namespace's LimitRanges and ResourceQuotas, as the webhook keeps them.
  const { rules, ranges, quotas } = await readNamespaceRules(client, namespace);
  const rulesRead = ranges.ok && quotas.ok;
  if (!ranges.ok) checks.push(cannot('limitranges', 'LimitRanges', ranges, `list limitranges ${scope}`));
  if (!quotas.ok) {
    checks.push(cannot('resourcequotas', 'ResourceQuotas', quotas, `list resourcequotas ${scope}`));
  }
  const parents = await readParents(client, namespace, scope, checks);
  const view = snapshotView(
    { cluster: clusterKnowledge(inputs.serverVersion.read, settings.sidecarGate), kubelets, settings },
    (ns) => namespaces.get(ns)?.policy,
    (ns) => (rulesRead ? (rules.get(ns) ?? NO_RULES) : undefined),
  );
  const grouped = podGroups(inputs, namespaces, parents, (ns) =>
    rewriteOptionsFor(view, settings, { namespace: ns }),
  );
  const pods = await eachItem(client, collection('', 'pods', namespace), grouped.keep);
  if (!pods.ok) {
    // Without the pods there is no data plane to speak of: that needs action, whatever else was read.
    checks.push({ ...cannot('pods', 'the pods', pods, `list pods ${scope}`), status: 'fail' });
  }
  // The node agents, only where a pod asked for the seal: nothing to say of them otherwise.
  if (grouped.seal.asked()) {
    const agents = await eachItem(
      client,
      `/api/v1/namespaces/kube-system/pods?labelSelector=${encodeURIComponent(AGENT_SELECTOR)}`,
      (pod) => grouped.seal.agentPod(pod),
    );
    if (!agents.ok) checks.push(cannot('pods', 'the node agents', agents, 'list pods in kube-system'));
  }
  const seal = grouped.seal.report();
  return {
    namespaces: [...namespaces]
      .filter(([, seen]) => seen.selected)
      .map(([name, seen]) => ({ name, selected: seen.selected, podSecurity: seen.policy.level }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    groups: sortedGroups(grouped.groups),
    counts: grouped.counts,
    finished: grouped.finished(),
    checks,
    tableless: sortedTableless(grouped.tableless),
    ...(seal.nodes.length === 0 ? {} : { seal }),
  };
}

/**
 * Namespaces: which the webhook sees, and their Pod Security levels (its namespace cache, read once); undefined
 * when they cannot be read. Of them, of ReplicaSets and of Jobs only the metadata is read (labels, owners), so only
 * the metadata is asked for: a ReplicaSet's or Job's pod template would be bytes and garbage for nothing.
 */
async function readNamespaces(inputs: DataPlaneInputs, checks: Check[]): Promise<Namespaces | undefined> {
  const { client, namespace, settings, selectors } = inputs;
  const namespaces: Namespaces = new Map();
  const keepNamespace = (object: Json) => {
    const name = nameOf(object);
    const labels = { 'kubernetes.io/metadata.name': name, ...podLabels(object) };
    namespaces.set(name, {
      selected: matchesSelector(selectors.namespace, labels),
      policy: keptNamespace(object, name, settings.podSecurityDefault),
    });
  };
  // Without the namespaces there is no data plane either: like the pods, that needs action.
  if (namespace === undefined) {
    const listed = await eachItem(client, '/api/v1/namespaces', keepNamespace, { metadataOnly: true });
    if (listed.ok) return namespaces;
    const what = 'which namespaces are labelled';
    checks.push({ ...cannot('namespaces', what, listed, 'list namespaces'), status: 'fail' });
    return undefined;
  }
  const reply = await client.get(`/api/v1/namespaces/${namespace}`);
  if (reply.ok) {
    keepNamespace(reply.body);
    return namespaces;
  }
  const right = `get namespaces/${namespace}`;
  checks.push({ ...cannot('namespaces', `namespace ${namespace}`, reply, right), status: 'fail' });
  return undefined;
}

/** ReplicaSet -> Deployment and Job -> CronJob, for the workload and its fix. */
async function readParents(
  client: ClusterClient,
  namespace: string | undefined,
  scope: string,
  checks: Check[],
): Promise<Map<string, Owner>> {
  const parents = new Map<string, Owner>();
  const keepParent = (kind: string) => (object: Json) => {
    const owner = controllerOf(object);
    if (owner !== undefined)
      parents.set(ownerKey(namespaceOf(object), { kind, name: nameOf(object) }), owner);
  };
  for (const [group, resource, kind] of [
    ['apps', 'replicasets', 'ReplicaSet'],
    ['batch', 'jobs', 'Job'],
  ] as const) {
    const listed = await eachItem(client, collection(group, resource, namespace), keepParent(kind), {
      metadataOnly: true,
    });
    if (!listed.ok) {
      const what = `which ${kind === 'ReplicaSet' ? 'Deployment' : 'CronJob'} owns each ${kind}`;
      checks.push(cannot(resource, what, listed, `list ${group} ${resource} ${scope}`));
    }
  }
  return parents;
}

/** Each pod, as it is read, reduced to its name in the group of its workload, class and reason. */
function podGroups(
  inputs: DataPlaneInputs,
  namespaces: Namespaces,
  parents: ReadonlyMap<string, Owner>,
  optionsFor: (namespace: string) => RewriteOptions,
) {
  const groups = new Map<string, Group>();
  const tableless = new Map<string, TablelessGroup>();
  const seal = new SealTally();
  const counts = Object.fromEntries(CLASSES.map((c) => [c, 0])) as Record<ClassName, number>;
  let finished = 0;
  const keep = (pod: Json) => {
    const meta = asObject(pod.metadata);
    const phase = asObject(pod.status).phase;
    if (meta.deletionTimestamp !== undefined || phase === 'Succeeded' || phase === 'Failed') {
      finished++;
      return;
    }
    const ns = namespaceOf(pod);
    const seen = namespaces.get(ns);
    if (seen === undefined) return;
    const name = nameOf(pod);
    const workload = workloadOf(ns, name, controllerOf(pod), parents);
    // In any namespace in scope: osm-edge's own pods are not labelled for our webhook.
    groupTableless(tableless, workload, name, tablelessCompanions(pod, inputs.ourImages));
    seal.pod(pod, workload, name);
    const found: PodClass = classifyPod(pod, {
      current: inputs.current,
      selected: {
        namespace: seen.selected,
        object: matchesSelector(inputs.selectors.object, podLabels(pod)),
      },
      options: optionsFor(ns),
    });
    // Outside the labelled namespaces only our own companions are news (inject's output applied there).
    if (!seen.selected && !['covered', 'stale', 'failing'].includes(found.class)) return;
    counts[found.class]++;
    const reason = found.class === 'untouched' ? found.reason : undefined;
    const key = `${ns}/${workload.kind}/${workload.name}/${found.class}/${reason ?? ''}`;
    const group = groups.get(key);
    if (group !== undefined) {
      group.pods.push(name);
      return;
    }
    groups.set(key, {
      ...workload,
      class: found.class,
      ...(reason === undefined ? {} : { reason }),
      detail: found.detail,
      pods: [name],
      needsAction: needsAction(found),
    });
  };
  return { keep, groups, tableless, seal, counts, finished: () => finished };
}

/** By namespace, class, kind and name, each with its pods sorted and the command that fixes it. */
function sortedGroups(groups: ReadonlyMap<string, Group>): Group[] {
  const sorted = [...groups.values()].sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) ||
      CLASSES.indexOf(a.class) - CLASSES.indexOf(b.class) ||
      a.kind.localeCompare(b.kind) ||
      a.name.localeCompare(b.name),
  );
  for (const group of sorted) {
    group.pods.sort();
    const fix = fixCommand(group, group.class, group.pods);
    if (fix !== undefined) group.fix = fix;
  }
  return sorted;
}

function empty(checks: Check[]): DataPlane {
  const counts = Object.fromEntries(CLASSES.map((c) => [c, 0])) as Record<ClassName, number>;
  return { namespaces: [], groups: [], counts, finished: 0, checks, tableless: [] };
}
