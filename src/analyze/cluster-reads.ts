// What the webhook's caches would hold, read once by analyze (the data plane) and by --pre alike: the API
// server's version, the oldest kubelet, each namespace's LimitRanges and ResourceQuotas, and from them the
// options the webhook would rewrite a pod of that namespace with.

import { parseKubeVersion } from '../kube-version.js';
import type { ClusterKnowledge, KubeletKnowledge } from '../rewrite/placement.js';
import type { EnforcedPolicy } from '../rewrite/pod-security.js';
import type { LimitRange, ResourceQuota } from '../rewrite/resources/namespace-rules.js';
import type { RewriteOptions } from '../rewrite/types.js';
import { keptLimitRange, keptResourceQuota } from '../webhook/namespace-rules.js';
import { kubeletOf, type NodeKubelet, oldestKubelet } from '../webhook/node-kubelets.js';
import { nameOf, namespaceOf } from './json.js';
import { type ClusterClient, ClusterError } from './kube-client.js';
import { eachItem, type ListOutcome } from './paged-list.js';
import type { WebhookSettings } from './webhook-settings.js';

export interface NamespaceRules {
  limitRanges: LimitRange[];
  resourceQuotas: ResourceQuota[];
}

/** The API server's gitVersion. Even an anonymous caller may read it: a refusal is the credentials'. */
export async function readServerVersion(client: ClusterClient): Promise<string> {
  const version = await client.get('/version');
  if (!version.ok) {
    throw new ClusterError(
      `the API server ${client.server} refused GET /version: ${version.message} (HTTP ${version.status})`,
    );
  }
  return String(version.body.gitVersion ?? 'unknown');
}

export function clusterKnowledge(serverVersion: string, sidecarGate: boolean): ClusterKnowledge {
  const version = parseKubeVersion(serverVersion);
  return version === undefined
    ? { state: 'unknown', why: `the API server reports version ${serverVersion}` }
    : { state: 'known', version, sidecarGate };
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

/** What the webhook's caches would hold of the cluster, for rewriteOptions. */
export interface Knowledge {
  cluster: ClusterKnowledge;
  kubelets: KubeletKnowledge;
  settings: WebhookSettings;
}

/**
 * The options the webhook would rewrite a pod of namespace `ns` with. Rules that could not be read are left
 * unchecked: where the API server applies them (the dry run) it says; a guess would misclass pods.
 */
export function rewriteOptions(
  knowledge: Knowledge,
  ns: string,
  policy: EnforcedPolicy,
  rules: NamespaceRules | undefined,
): RewriteOptions {
  const { settings } = knowledge;
  return {
    image: settings.image,
    placement: settings.placement,
    cluster: knowledge.cluster,
    kubelets: knowledge.kubelets,
    podSecurity: { state: 'known', policy },
    namespaceRules:
      rules === undefined ? { state: 'unchecked' } : { state: 'known', namespace: ns, ...rules },
    ...(settings.companionCpuLimit === undefined ? {} : { companionCpuLimit: settings.companionCpuLimit }),
  };
}
