// Where the companion goes, decided once for inject (`--kube-version`) and the webhook (the API server's
// GET /version and a watch of nodes): a native sidecar only where the API server and the kubelets have them,
// else first among the containers with a postStart hook, which every Kubernetes version honours. An API server
// without native sidecars refuses a pod whose init container has `restartPolicy` ("strict decoding error: unknown
// field") or probes ("may not be set for init containers"), and with a webhook that refusal hits every pod of
// the namespace; a kubelet without them drops `restartPolicy` and waits forever for that init container to end.

import { describeValue } from '../errors.js';
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
  /**
   * `version`: the pod's own node's kubelet when spec.nodeName is set, else the oldest kubelet in the cluster.
   * `source`: who runs it, as the subject of "runs kubelet 1.32": `the oldest of 5 nodes ("n3")`, `node "n3"`.
   */
  | { state: 'known'; version: KubeVersion; source: string }
  /** Nodes not listed (yet), or the pod's node not among them: never guess. */
  | { state: 'unknown'; why: string }
  /** inject: --kube-version stands for the kubelets too. */
  | { state: 'unchecked' };

/**
 * `auto`: a native sidecar where the API server and every kubelet that may run the pod are 1.33+ (native sidecars
 * GA, the gate locked on: Istio's rule); `native-sidecar`: wherever they have them (1.29+); `first`: never a
 * native sidecar (unless a probed native sidecar forces it: pod.ts).
 */
export const PLACEMENT_MODES = ['auto', 'native-sidecar', 'first'] as const;
export type PlacementMode = (typeof PLACEMENT_MODES)[number];

export function parsePlacementMode(text: string): PlacementMode | undefined {
  const value = text.trim().toLowerCase();
  return PLACEMENT_MODES.find((mode) => mode === value);
}

/**
 * --placement, else its alias --native-sidecar, else auto; what is wrong when the text is no mode or the two
 * say different things (inject and the webhook read the same flags). `field` names where the text came from.
 */
export function placementFlags(
  text: string | undefined,
  nativeSidecar: boolean,
  field = '--placement',
): { mode: PlacementMode } | { invalid: string } {
  if (text === undefined) return { mode: nativeSidecar ? 'native-sidecar' : 'auto' };
  const mode = parsePlacementMode(text);
  if (mode === undefined) {
    return { invalid: `${field} ${describeValue(text)} is not accepted` };
  }
  if (nativeSidecar && mode !== 'native-sidecar') {
    return { invalid: `--native-sidecar (--placement native-sidecar) and ${field} ${mode} both given` };
  }
  return { mode };
}

export interface Placement {
  /** The companion as a native sidecar. */
  native: boolean;
  /** One line: what was chosen and why, for inject's stderr and the webhook's log. */
  reason: string;
}

export const NATIVE_SIDECAR_VERSIONS = 'Kubernetes 1.29+, or 1.28 with the SidecarContainers feature gate';

// Its postStart hook holds the next containers back until it listens (docs/architecture.md#start-and-stop-order).
const FIRST = 'the companion goes first among the containers';

/**
 * KEP-753: alpha in 1.28 (SidecarContainers gate, off by default), beta and on by default from 1.29, GA in 1.33.
 * kubernetes/website content/en/docs/concepts/workloads/pods/sidecar-containers.md.
 */
export function hasNativeSidecars(version: KubeVersion, sidecarGate: boolean): boolean {
  return atLeast(version, 1, 29) || (sidecarGate && atLeast(version, 1, 28));
}

/** GA, the feature gate locked on: no cluster can have turned them off (auto's bar). */
export function hasGaNativeSidecars(version: KubeVersion): boolean {
  return atLeast(version, 1, 33);
}

/** A version that must meet the bar, in words naming where it comes from. */
export interface Party {
  version: KubeVersion;
  /** `the API server runs Kubernetes 1.30`, `the oldest of 5 nodes ("n3") runs kubelet 1.32`. */
  clause: string;
  kubelet: boolean;
}

/** The API server and the kubelets against one bar; the lowest known version below it decides first. */
export type Judgement =
  | { state: 'meets'; clauses: string }
  | { state: 'below'; party: Party; sidecarGate: boolean }
  /** `notKnown`: `the Kubernetes version is not known`, or the kubelets'; `why`: the error behind it. */
  | { state: 'unknown'; notKnown: string; kubelets: boolean; why: string }
  | { state: 'unchecked' };

export function judge(
  cluster: ClusterKnowledge,
  kubelets: KubeletKnowledge,
  meets: (version: KubeVersion) => boolean,
): Judgement {
  const sidecarGate = cluster.state === 'known' && cluster.sidecarGate;
  // The gate is named only where it makes the difference: 1.28.
  const gated = (version: KubeVersion) =>
    sidecarGate && version.major === 1 && version.minor === 28 ? ' with the SidecarContainers gate' : '';
  const parties: Party[] = [];
  if (cluster.state === 'known') {
    const { version } = cluster;
    // Unchecked kubelets (inject): --kube-version stands for the whole cluster.
    const who = kubelets.state === 'unchecked' ? 'the cluster' : 'the API server';
    const clause = `${who} runs Kubernetes ${formatVersion(version)}${gated(version)}`;
    parties.push({ version, clause, kubelet: false });
  }
  if (kubelets.state === 'known') {
    const { version, source } = kubelets;
    const clause = `${source} runs kubelet ${formatVersion(version)}${gated(version)}`;
    parties.push({ version, clause, kubelet: true });
  }
  const [below] = parties
    .filter((party) => !meets(party.version))
    .sort((a, b) => a.version.major - b.version.major || a.version.minor - b.version.minor);
  if (below !== undefined) return { state: 'below', party: below, sidecarGate };
  if (cluster.state === 'unknown') {
    return {
      state: 'unknown',
      notKnown: 'the Kubernetes version is not known',
      kubelets: false,
      why: cluster.why,
    };
  }
  if (kubelets.state === 'unknown') {
    return {
      state: 'unknown',
      notKnown: "the kubelets' versions are not known",
      kubelets: true,
      why: kubelets.why,
    };
  }
  if (cluster.state === 'unchecked') return { state: 'unchecked' };
  return { state: 'meets', clauses: parties.map((party) => party.clause).join(' and ') };
}

/** Why a party below the bar of native sidecars lacks them: the end of its clause. */
export function lacking(party: Party, sidecarGate: boolean): string {
  const { version } = party;
  const gateOnly = !sidecarGate && version.major === 1 && version.minor === 28;
  return gateOnly
    ? 'which has native sidecars only with --sidecar-containers-gate'
    : 'which has no native sidecars';
}

/** Where the companion goes in a pod that keeps running. */
export function choosePlacement(
  mode: PlacementMode,
  cluster: ClusterKnowledge,
  kubelets: KubeletKnowledge,
): Placement {
  if (mode === 'first') return { native: false, reason: `${FIRST} (placement first)` };
  const native = (why: string, unchecked = ''): Placement => ({
    native: true,
    reason: `the companion is a native sidecar (placement ${mode}${mode === 'auto' ? ', 1.33+' : ''})${unchecked}: ${why}`,
  });
  if (mode === 'auto') {
    const first = (why: string): Placement => ({
      native: false,
      reason: `${FIRST} (placement auto): ${why}`,
    });
    const ga = judge(cluster, kubelets, hasGaNativeSidecars);
    switch (ga.state) {
      case 'meets':
        return native(ga.clauses);
      case 'unknown':
        return first(`${ga.notKnown} (${ga.why})`);
      case 'unchecked':
        return first('the Kubernetes version is not known: with --kube-version 1.33+ it is a native sidecar');
      case 'below': {
        const { party, sidecarGate } = ga;
        return first(
          hasNativeSidecars(party.version, sidecarGate)
            ? `${party.clause}: native sidecars are GA from 1.33 (--placement native-sidecar uses them now)`
            : `${party.clause}, ${lacking(party, sidecarGate)}`,
        );
      }
    }
  }
  const first = (why: string): Placement => ({
    native: false,
    reason: `${FIRST}, not a native sidecar: ${why}`,
  });
  const sidecarGate = cluster.state === 'known' && cluster.sidecarGate;
  const has = judge(cluster, kubelets, (version) => hasNativeSidecars(version, sidecarGate));
  switch (has.state) {
    case 'meets':
      return native(has.clauses);
    case 'unknown':
      return first(`${has.notKnown} (${has.why})`);
    case 'unchecked':
      return native(
        `it needs ${NATIVE_SIDECAR_VERSIONS}; older API servers refuse the pod, older kubelets never start it (--kube-version checks)`,
        ', unchecked',
      );
    case 'below':
      return first(`${has.party.clause}, ${lacking(has.party, has.sidecarGate)}`);
  }
}
