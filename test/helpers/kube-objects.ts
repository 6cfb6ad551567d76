// What the webhook lists and watches of a cluster, as a stand-in API server serves it: namespaces (Pod Security
// labels), LimitRanges and ResourceQuotas (namespace rules), nodes (kubelet versions), each a collection
// (kube-collection.ts) under one resourceVersion counter; and objects shaped as the API server returns them.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Collection, collection } from './kube-collection.js';
import { type NamespaceStore, namespaceStore } from './kube-namespaces.js';

type Json = Record<string, unknown>;

export interface ClusterObjects {
  namespaces: NamespaceStore;
  limitRanges: Collection;
  resourceQuotas: Collection;
  nodes: Collection;
  /** Serves GET on any of the four paths; false for any other. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  endWatches(): void;
}

/** The RBAC resource each collection is authorised as. */
export const WATCHED_RESOURCES = ['namespaces', 'limitranges', 'resourcequotas', 'nodes'] as const;
export type WatchedResource = (typeof WATCHED_RESOURCES)[number];

export function clusterObjects(): ClusterObjects {
  const revision = { value: 1000 };
  const namespaces = namespaceStore(revision);
  const limitRanges = collection('/api/v1/limitranges', 'LimitRange', revision);
  const resourceQuotas = collection('/api/v1/resourcequotas', 'ResourceQuota', revision);
  const nodes = collection('/api/v1/nodes', 'Node', revision);
  const all = [namespaces, limitRanges, resourceQuotas, nodes];
  return {
    namespaces,
    limitRanges,
    resourceQuotas,
    nodes,
    handle: (req, res) => all.some((c) => c.handle(req, res)),
    endWatches() {
      for (const c of all) c.endWatches();
    },
  };
}

/** The collection's RBAC resource for a request path, or undefined for a path none serves. */
export function watchedResource(path: string): WatchedResource | undefined {
  return WATCHED_RESOURCES.find((resource) => path === `/api/v1/${resource}`);
}

/**
 * A node as kubelet reports it: the fields the webhook reads (status.nodeInfo.kubeletVersion) among the bulk it
 * does not (images, conditions, managedFields), so a test sees that only the version is kept.
 */
export function node(name: string, kubeletVersion: string): Json {
  return {
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
      managedFields: [{ manager: 'kubelet', operation: 'Update', apiVersion: 'v1' }],
    },
    spec: { podCIDR: '10.244.1.0/24' },
    status: {
      capacity: { cpu: '4', memory: '16Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      images: Array.from({ length: 20 }, (_, i) => ({
        names: [`registry.example.com/app-${i}@sha256:${'0'.repeat(64)}`],
        sizeBytes: 1000000 + i,
      })),
      nodeInfo: {
        kubeletVersion,
        kubeProxyVersion: kubeletVersion,
        containerRuntimeVersion: 'containerd://1.7.24',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
}

export function limitRange(namespace: string, name: string, limits: Json[]): Json {
  return {
    metadata: { name, namespace, managedFields: [{ manager: 'kubectl', operation: 'Update' }] },
    spec: { limits },
  };
}

/** A ResourceQuota with its status as the quota controller fills it in. */
export function resourceQuota(
  namespace: string,
  name: string,
  hard: Record<string, string>,
  used: Record<string, string> = {},
): Json {
  return {
    metadata: { name, namespace, annotations: { note: 'not kept' } },
    spec: { hard },
    status: { hard, used },
  };
}
