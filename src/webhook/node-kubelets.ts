// The kubelet version of every node, kept from a list and watch of nodes (reflector.ts): the API server's version
// says nothing of the kubelets that run pods (they may trail it by three minors). Of each node only its name and
// status.nodeInfo.kubeletVersion are kept: a node object is tens of KB. A pod bound to a node (spec.nodeName) runs
// on that node's kubelet; any other pod may land on any node, so the oldest kubelet stands for them all.

import { type KubeVersion, parseKubeVersion } from '../kube-version.js';
import type { KubeletKnowledge } from '../rewrite/placement.js';
import { type KubeObject, reflect, type Store, type WatchOptions, watchOptions } from './reflector.js';

export interface NodeKubelets {
  /** Now, without waiting: the kubelet of `nodeName` (the pod's spec.nodeName), else the oldest in the cluster. */
  kubelets(nodeName: string | undefined): KubeletKnowledge;
  /** Why nodes were never listed yet, or undefined once they were. */
  notReady(): string | undefined;
  close(): void;
}

/** A node's kubelet: its version, or the text it reports that is none. */
export type NodeKubelet = { version: KubeVersion } | { unreadable: string };

/** Nodes list pages stay small: a node object carries its images and volumes. */
const NODE_PAGE = 50;

export function kubeletOf(object: KubeObject): NodeKubelet {
  const status = object.status as { nodeInfo?: { kubeletVersion?: unknown } } | undefined;
  const text = status?.nodeInfo?.kubeletVersion;
  const version = typeof text === 'string' ? parseKubeVersion(text) : undefined;
  return version === undefined ? { unreadable: JSON.stringify(text ?? null) } : { version };
}

const unreadable = (name: string, kubelet: { unreadable: string }) =>
  `node "${name}" reports kubelet version ${kubelet.unreadable}, which is no Kubernetes version`;

const older = (a: KubeVersion, b: KubeVersion) =>
  a.major < b.major || (a.major === b.major && a.minor < b.minor);

/** The oldest kubelet of all nodes (the first by name among equals); unknown when any cannot be read. */
export function oldestKubelet(nodes: ReadonlyMap<string, NodeKubelet>): KubeletKnowledge {
  // One pass, no sort: recomputed after every change, and a large cluster's nodes change often.
  let oldest: { name: string; version: KubeVersion } | undefined;
  let blind: { name: string; kubelet: { unreadable: string } } | undefined;
  for (const [name, kubelet] of nodes) {
    if ('unreadable' in kubelet) {
      if (blind === undefined || name < blind.name) blind = { name, kubelet };
    } else if (
      oldest === undefined ||
      older(kubelet.version, oldest.version) ||
      (!older(oldest.version, kubelet.version) && name < oldest.name)
    ) {
      oldest = { name, version: kubelet.version };
    }
  }
  if (blind !== undefined) return { state: 'unknown', why: unreadable(blind.name, blind.kubelet) };
  if (oldest === undefined) return { state: 'unknown', why: 'the cluster has no nodes (yet)' };
  const count = nodes.size === 1 ? 'the only node' : `the oldest of ${nodes.size} nodes`;
  return { state: 'known', version: oldest.version, source: `${count} ("${oldest.name}")` };
}

/** The pod's own node's kubelet. */
export function nodeKubelet(nodes: ReadonlyMap<string, NodeKubelet>, name: string): KubeletKnowledge {
  const kubelet = nodes.get(name);
  if (kubelet === undefined)
    return { state: 'unknown', why: `node "${name}" is not in the node watch (yet)` };
  if ('unreadable' in kubelet) return { state: 'unknown', why: unreadable(name, kubelet) };
  return { state: 'known', version: kubelet.version, source: `the pod's node ("${name}")` };
}

export function watchNodeKubelets(options: WatchOptions): NodeKubelets {
  const nodes = reflect<NodeKubelet>({
    ...watchOptions(options),
    path: '/api/v1/nodes',
    resource: 'nodes',
    kind: 'node',
    keep: kubeletOf,
    unlisted: 'kubelet versions are not known until they are',
    lagging: 'kubelet versions may lag until it is back',
    pageSize: NODE_PAGE,
  });
  // Computed again only after a change of the nodes (a status update is one): most admissions find it ready.
  let oldest: { generation: number; knowledge: KubeletKnowledge } | undefined;
  const all = (store: Store<NodeKubelet>) => store.get('') ?? new Map<string, NodeKubelet>();
  return {
    kubelets(nodeName) {
      const store = nodes.store();
      if (store === undefined) return { state: 'unknown', why: nodes.notListed() ?? '' };
      if (nodeName !== undefined) return nodeKubelet(all(store), nodeName);
      if (oldest?.generation !== nodes.generation()) {
        oldest = { generation: nodes.generation(), knowledge: oldestKubelet(all(store)) };
      }
      return oldest.knowledge;
    },
    notReady: nodes.notListed,
    close: nodes.close,
  };
}
