// Namespaces as the API server serves them to a list and watch (kube-collection.ts), with the labels the webhook
// reads for Pod Security: hooks relabel, create and delete namespaces.

import { type Collection, collection, type Revision } from './kube-collection.js';

export interface NamespaceStore extends Omit<Collection, 'put' | 'remove' | 'get'> {
  /** Creates, relabels (labels) or deletes (undefined) a namespace, with a watch event as the API server sends. */
  put(name: string, labels: Record<string, string> | undefined): void;
  /** The labels of a namespace, or undefined when there is none. */
  labels(name: string): Record<string, string> | undefined;
}

export function namespaceStore(revision?: Revision): NamespaceStore {
  const namespaces = collection('/api/v1/namespaces', 'Namespace', revision);
  return {
    ...namespaces,
    put(name, labels) {
      if (labels === undefined) return namespaces.remove(name);
      namespaces.put({
        metadata: { name, uid: `ns-${name}`, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      });
    },
    labels(name) {
      const object = namespaces.get(name);
      return (object?.metadata as { labels?: Record<string, string> } | undefined)?.labels;
    },
  };
}
