// What the webhook's caches would hold, read once by analyze (the data plane) and by --pre alike: the API
// server's version, the oldest kubelet, each namespace's LimitRanges and ResourceQuotas, held as one view of the
// cluster (cluster/view.ts), from which the webhook's own rewriteOptionsFor makes a pod's options.

import { keptLimitRange, keptResourceQuota } from '../cluster/namespace-rules.js';
import { kubeletOf, type NodeKubelet, oldestKubelet } from '../cluster/node-kubelets.js';
import type { ClusterView, VersionRead } from '../cluster/view.js';
import { versionFromApi } from '../kube-version.js';
import type { ClusterKnowledge, KubeletKnowledge } from '../rewrite/placement.js';
import type { EnforcedPolicy } from '../rewrite/pod-security.js';
import type { LimitRange, ResourceQuota } from '../rewrite/resources/namespace-rules.js';
import { nameOf, namespaceOf } from './json.js';
import { type ClusterClient, ClusterError } from './kube-client.js';
import { eachItem, type ListOutcome } from './paged-list.js';
import type { WebhookSettings } from './webhook-settings.js';

export interface NamespaceRules {
  limitRanges: LimitRange[];
  resourceQuotas: ResourceQuota[];
}

/** The API server's GET /version: its gitVersion to show, and the version as the webhook reads it. */
export interface ServerVersion {
  text: string;
  read: VersionRead;
}

/** Even an anonymous caller may read the version: a refusal is the credentials'. */
export async function readServerVersion(client: ClusterClient): Promise<ServerVersion> {
  const version = await client.get('/version');
  if (!version.ok) {
    throw new ClusterError(
      `the API server ${client.server} refused GET /version: ${version.message} (HTTP ${version.status})`,
    );
  }
  return { text: String(version.body.gitVersion ?? 'unknown'), read: versionRead(version.body) };
}

function versionRead(body: unknown): VersionRead {
  try {
    return { version: versionFromApi(body) };
  } catch (err) {
    return { why: (err as Error).message };
  }
}

/** The oldest kubelet, which decides where the companion of a new pod goes (webhook/node-kubelets.ts). */
export async function readKubelets(
  client: ClusterClient,
  page = 50,
): Promise<{ kubelets: KubeletKnowledge; listed: ListOutcome }> {
  const nodes = new Map<string, NodeKubelet>();
  // A node object carries its images: small pages.
  const listed = await eachItem(client, '/api/v1/nodes', (n) => nodes.set(nameOf(n), kubeletOf(n)), {
    limit: page,
  });
  const kubelets: KubeletKnowledge = listed.ok
    ? oldestKubelet(nodes)
    : { state: 'unknown', why: 'nodes could not be listed' };
  return { kubelets, listed };
}

/** Each namespace's LimitRanges and ResourceQuotas as the webhook keeps them, within one namespace or all. */
export async function readNamespaceRules(
  client: ClusterClient,
  namespace: string | undefined,
): Promise<{ rules: Map<string, NamespaceRules>; ranges: ListOutcome; quotas: ListOutcome }> {
  const rules = new Map<string, NamespaceRules>();
  const of = (ns: string) => {
    let found = rules.get(ns);
    if (found === undefined) {
      found = { limitRanges: [], resourceQuotas: [] };
      rules.set(ns, found);
    }
    return found;
  };
  const root = namespace === undefined ? '/api/v1' : `/api/v1/namespaces/${namespace}`;
  const ranges = await eachItem(client, `${root}/limitranges`, (o) =>
    of(namespaceOf(o)).limitRanges.push(keptLimitRange(o)),
  );
  const quotas = await eachItem(client, `${root}/resourcequotas`, (o) =>
    of(namespaceOf(o)).resourceQuotas.push(keptResourceQuota(o)),
  );
  return { rules, ranges, quotas };
}

/** What the webhook's caches would hold of the cluster, and the settings it rewrites with. */
export interface Knowledge {
  cluster: ClusterKnowledge;
  kubelets: KubeletKnowledge;
  settings: WebhookSettings;
}

export const NO_RULES: NamespaceRules = { limitRanges: [], resourceQuotas: [] };

/**
 * analyze's one-shot view of what it read: each namespace's policy, and its rules (undefined where they could not
 * be read: left unchecked, the dry run applies them where it runs, and a guess would misclass pods).
 */
export function snapshotView(
  knowledge: Knowledge,
  policy: (namespace: string) => EnforcedPolicy | undefined,
  rules: (namespace: string) => NamespaceRules | undefined,
): ClusterView {
  return {
    cluster: () => knowledge.cluster,
    // Pods are judged as the webhook judged them at creation, before a node was theirs: the oldest kubelet.
    kubelets: () => knowledge.kubelets,
    podSecurity: (namespace = '') => {
      const known = policy(namespace);
      return known === undefined
        ? { state: 'unknown', namespace, why: 'its namespace was not read' }
        : { state: 'known', policy: known };
    },
    namespaceRules: (namespace = '') => {
      const known = rules(namespace);
      return known === undefined ? { state: 'unchecked' } : { state: 'known', namespace, ...known };
    },
  };
}
