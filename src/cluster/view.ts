// One view of the cluster, as a rewrite needs it: the API server's version, the kubelets, a namespace's Pod Security
// policy and its LimitRanges and ResourceQuotas. The webhook's live caches implement it (webhook/server.ts) and
// so does analyze's one-shot snapshot (analyze/cluster-reads.ts); rewriteOptionsFor makes of either, with the
// webhook's settings, the options of one pod's rewrite, so analyze asks the rewrite what the webhook would.

import type { KubeVersion } from '../kube-version.js';
import type { ClusterKnowledge, KubeletKnowledge, PlacementMode } from '../rewrite/placement.js';
import type { PodSecurityKnowledge } from '../rewrite/pod-security.js';
import type { NamespaceRulesKnowledge } from '../rewrite/resources/namespace-rules.js';
import type { RewriteOptions } from '../rewrite/types.js';
import type { SealMode } from '../seal/setting.js';

/** What is known of the cluster now, without waiting; `unknown` with a reason rather than a guess. */
export interface ClusterView {
  /** The API server's version (and 1.28's SidecarContainers gate). */
  cluster(): ClusterKnowledge;
  /** The kubelet of the pod's node (spec.nodeName), else the oldest in the cluster. */
  kubelets(nodeName: string | undefined): KubeletKnowledge;
  /** The Pod Security level the namespace enforces. */
  podSecurity(namespace: string | undefined): PodSecurityKnowledge;
  /** The namespace's LimitRanges and ResourceQuotas. */
  namespaceRules(namespace: string | undefined): NamespaceRulesKnowledge;
}

/** What a rewrite takes from the webhook's flags rather than from the cluster (webhook/settings.ts). */
export interface RewriteSettings {
  image: string;
  placement: PlacementMode;
  /** A canonical CPU quantity, or undefined for none. */
  companionCpuLimit?: string | undefined;
  /** --seal: `node` where the node agent runs (rewrite/seal.ts); default off. */
  seal?: SealMode | undefined;
}

/** The options the webhook rewrites a pod of `namespace` (bound to `nodeName`, if it is) with. */
export function rewriteOptionsFor(
  view: ClusterView,
  settings: RewriteSettings,
  pod: { namespace: string | undefined; nodeName?: string | undefined },
): RewriteOptions {
  return {
    image: settings.image,
    placement: settings.placement,
    cluster: view.cluster(),
    podSecurity: view.podSecurity(pod.namespace),
    namespaceRules: view.namespaceRules(pod.namespace),
    kubelets: view.kubelets(pod.nodeName),
    ...(settings.companionCpuLimit === undefined ? {} : { companionCpuLimit: settings.companionCpuLimit }),
    ...(settings.seal === undefined || settings.seal === 'off' ? {} : { seal: settings.seal }),
  };
}

/** The API server's version as read (kube-version.ts versionFromApi), or why it could not be. */
export type VersionRead = { version: KubeVersion } | { why: string };

/** What a rewrite knows of the cluster from the version read, for the webhook and analyze alike. */
export function clusterKnowledge(read: VersionRead, sidecarGate: boolean): ClusterKnowledge {
  return 'version' in read
    ? { state: 'known', version: read.version, sidecarGate }
    : { state: 'unknown', why: read.why };
}
