// Where the companion goes, decided once for inject (`--kube-version`) and the webhook (the API server's
// GET /version): a native sidecar only where the cluster has them, else first among the containers with a
// postStart hook, which every Kubernetes version honours. An API server without native sidecars refuses a pod
// whose init container has `restartPolicy` ("strict decoding error: unknown field") or probes ("may not be set
// for init containers"), and with a webhook that refusal hits every pod of the namespace.

import { atLeast, formatVersion, type KubeVersion } from '../kube-version.js';

/** What is known of the cluster the pod is for. */
export type ClusterKnowledge =
  /** `sidecarGate`: the SidecarContainers feature gate is on (only 1.28 needs to be told). */
  | { state: 'known'; version: KubeVersion; sidecarGate: boolean }
  /** The webhook could not learn the version (yet): it never guesses. */
  | { state: 'unknown'; why: string }
  /** inject without --kube-version: whoever asks for a native sidecar vouches for the cluster. */
  | { state: 'unchecked' };

/**
 * What is known of the kubelets that may run the pod: the API server's version says nothing of them (version skew
 * lets kubelets trail it by three minors). The webhook keeps them from a list and watch of nodes.
 */
export type KubeletKnowledge =
  /** `version`: the pod's own node's kubelet when spec.nodeName is set, else the oldest kubelet in the cluster. */
  | { state: 'known'; version: KubeVersion; source: string }
  /** Nodes not listed (yet), or the pod's node not among them: never guess. */
  | { state: 'unknown'; why: string }
  /** inject: --kube-version stands for the kubelets too. */
  | { state: 'unchecked' };

export interface Placement {
  /** The companion as a native sidecar (RewriteOptions.nativeSidecar). */
  native: boolean;
  /** One line: what was chosen and why, for inject's stderr and the webhook's log. */
  reason: string;
}

export const NATIVE_SIDECAR_VERSIONS = 'Kubernetes 1.29+, or 1.28 with the SidecarContainers feature gate';

const FIRST = 'the companion goes first among the containers, with a postStart hook that waits for it';

/**
 * KEP-753: alpha in 1.28 (SidecarContainers gate, off by default), beta and on by default from 1.29.
 * kubernetes/website content/en/docs/concepts/workloads/pods/sidecar-containers.md.
 */
export function hasNativeSidecars(version: KubeVersion, sidecarGate: boolean): boolean {
  return atLeast(version, 1, 29) || (sidecarGate && atLeast(version, 1, 28));
}

/** `nativeSidecar`: asked for (`--native-sidecar`); granted only where the cluster is known to have them. */
export function choosePlacement(nativeSidecar: boolean, cluster: ClusterKnowledge): Placement {
  if (cluster.state === 'unchecked') {
    return nativeSidecar
      ? {
          native: true,
          reason: `the companion is a native sidecar, as asked: that needs ${NATIVE_SIDECAR_VERSIONS}; older API servers refuse the pod (--kube-version checks)`,
        }
      : { native: false, reason: FIRST };
  }
  if (cluster.state === 'unknown') {
    return {
      native: false,
      reason: nativeSidecar
        ? `${FIRST}, not a native sidecar: the Kubernetes version is not known (${cluster.why})`
        : FIRST,
    };
  }
  const { version, sidecarGate } = cluster;
  const has = hasNativeSidecars(version, sidecarGate);
  const named = `Kubernetes ${formatVersion(version)}${sidecarGate && has && !atLeast(version, 1, 29) ? ' with the SidecarContainers feature gate' : ''}`;
  if (has) {
    return nativeSidecar
      ? { native: true, reason: `the companion is a native sidecar: ${named} has them` }
      : { native: false, reason: `${FIRST} (${named} has native sidecars: --native-sidecar uses one)` };
  }
  const lacks =
    version.major === 1 && version.minor === 28
      ? `${named} has native sidecars only with the SidecarContainers feature gate, which --sidecar-containers-gate says is on`
      : `${named} has no native sidecars (they need ${NATIVE_SIDECAR_VERSIONS})`;
  return { native: false, reason: `${FIRST}${nativeSidecar ? ', not a native sidecar' : ''}: ${lacks}` };
}
