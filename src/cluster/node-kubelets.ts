// A node's kubelet version, and the kubelet that decides where a new pod's companion goes: the API server's version
// says nothing of the kubelets that run pods (they may trail it by three minors). A pod bound to a node
// (spec.nodeName) runs on that node's kubelet; any other pod may land on any node, so the oldest stands for them all.

import type { Json } from '../json.js';
import { type KubeVersion, parseKubeVersion } from '../kube-version.js';
import type { KubeletKnowledge } from '../rewrite/placement.js';

/** A node's kubelet: its version, or the text it reports that is none. */
export type NodeKubelet = { version: KubeVersion } | { unreadable: string };

export function kubeletOf(object: Json): NodeKubelet {
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
