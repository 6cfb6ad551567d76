// The kubelet version of every node, kept from a list and watch of nodes (reflector.ts): the API server's version
// says nothing of the kubelets that run pods (they may trail it by three minors). Of each node only its name and
// status.nodeInfo.kubeletVersion are kept: a node object is tens of KB. A pod bound to a node (spec.nodeName) runs
// on that node's kubelet; any other pod may land on any node, so the oldest kubelet stands for them all.

import { kubeletOf, type NodeKubelet, nodeKubelet, oldestKubelet } from '../cluster/node-kubelets.js';
import type { KubeletKnowledge } from '../rewrite/placement.js';
import { reflect, type Store, type WatchOptions, watchOptions } from './reflector.js';

export interface NodeKubelets {
  /** Now, without waiting: the kubelet of `nodeName` (the pod's spec.nodeName), else the oldest in the cluster. */
  kubelets(nodeName: string | undefined): KubeletKnowledge;
  /** Why nodes were never listed yet, or undefined once they were. */
  notReady(): string | undefined;
  close(): void;
}

/** Nodes list pages stay small: a node object carries its images and volumes. */
const NODE_PAGE = 50;

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
