// Where the companion goes, for every placement mode, Kubernetes version of the API server and of the kubelets,
// and what is known of them: auto a native sidecar only where both are 1.33+, native-sidecar wherever both have
// them, first never; never a guess while a version is unknown, the oldest kubelet deciding, the reason in words
// naming the versions and where they come from, and for every version from 1.16 to 1.33 a rewritten pod that
// version's API server accepts.

import { describe, expect, it } from 'vitest';
import type { KubeVersion } from '../../src/kube-version.js';
import { COMPANION_NAME, INIT_NAME, WAIT_COMMAND } from '../../src/rewrite/companion.js';
import {
  type ClusterKnowledge,
  choosePlacement,
  hasGaNativeSidecars,
  hasNativeSidecars,
  type KubeletKnowledge,
  PLACEMENT_MODES,
  type PlacementMode,
  parsePlacementMode,
  placementFlags,
} from '../../src/rewrite/placement.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import type { Container, PodSpec } from '../../src/rewrite/types.js';
import { apiServerRefusals } from '../helpers/api-server.js';

const known = (minor: number, sidecarGate = false): ClusterKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  sidecarGate,
});
const OLDEST = 'the oldest of 5 nodes ("n3")';
const kubelet = (minor: number, source = OLDEST): KubeletKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  source,
});
const UNCHECKED = { state: 'unchecked' } as const;
const NODES_UNKNOWN: KubeletKnowledge = { state: 'unknown', why: 'nodes not listed yet' };
const VERSION_UNKNOWN: ClusterKnowledge = { state: 'unknown', why: 'GET /version: connect ECONNREFUSED' };

const FIRST = 'the companion goes first among the containers';
const NOT_NATIVE = `${FIRST}, not a native sidecar`;
const AUTO_FIRST = `${FIRST} (placement auto)`;
const GA = 'native sidecars are GA from 1.33 (--placement native-sidecar uses them now)';
describe('hasNativeSidecars', () => {
  it.each([
    { minor: 24, gate: false, want: false },
    { minor: 26, gate: false, want: false },
    // The gate exists from 1.28 on: saying it is on for an older version changes nothing.
    { minor: 27, gate: true, want: false },
    { minor: 28, gate: false, want: false },
    { minor: 28, gate: true, want: true },
    { minor: 29, gate: false, want: true },
    { minor: 33, gate: false, want: true },
  ])('1.$minor, gate $gate: $want', ({ minor, gate, want }) => {
    expect(hasNativeSidecars({ major: 1, minor }, gate)).toBe(want);
  });
});

describe('hasGaNativeSidecars and parsePlacementMode', () => {
  it.each([
    { minor: 28, want: false },
    { minor: 32, want: false },
    { minor: 33, want: true },
    { minor: 36, want: true },
  ])('1.$minor: GA $want', ({ minor, want }) => {
    expect(hasGaNativeSidecars({ major: 1, minor })).toBe(want);
  });

  it.each([
    { text: 'auto', want: 'auto' },
    { text: ' Native-Sidecar ', want: 'native-sidecar' },
    { text: 'first', want: 'first' },
    { text: 'last', want: undefined },
    { text: '', want: undefined },
  ])('"$text": $want', ({ text, want }) => {
    expect(parsePlacementMode(text)).toBe(want);
  });
});

describe('placementFlags: --placement and its alias --native-sidecar', () => {
  it.each([
    { name: 'neither: auto', text: undefined, alias: false, want: { mode: 'auto' } },
    { name: 'the alias alone', text: undefined, alias: true, want: { mode: 'native-sidecar' } },
    { name: '--placement first', text: 'first', alias: false, want: { mode: 'first' } },
    { name: 'both saying the same', text: 'native-sidecar', alias: true, want: { mode: 'native-sidecar' } },
    {
      name: 'both saying different things',
      text: 'auto',
      alias: true,
      want: { invalid: '--native-sidecar (--placement native-sidecar) and --placement auto both given' },
    },
    {
      name: 'no mode',
      text: 'sidecar',
      alias: false,
      want: { invalid: '--placement "sidecar" is not accepted' },
    },
  ])('$name', ({ text, alias, want }) => {
    expect(placementFlags(text, alias)).toEqual(want);
  });
});

describe('choosePlacement, the reasons', () => {
  it.each<{
    name: string;
    mode: PlacementMode;
    cluster: ClusterKnowledge;
    kubelets?: KubeletKnowledge;
    native: boolean;
    reason: string;
  }>([
    {
      name: 'auto, inject --kube-version 1.33: the cluster, kubelets included',
      mode: 'auto',
      cluster: known(33),
      native: true,
      reason: 'the companion is a native sidecar (placement auto, 1.33+): the cluster runs Kubernetes 1.33',
    },
    {
      name: 'auto, webhook: API server and the oldest kubelet 1.33+',
      mode: 'auto',
      cluster: known(34),
      kubelets: kubelet(33),
      native: true,
      reason: `the companion is a native sidecar (placement auto, 1.33+): the API server runs Kubernetes 1.34 and ${OLDEST} runs kubelet 1.33`,
    },
    {
      name: 'auto, mid-upgrade: one kubelet still 1.32',
      mode: 'auto',
      cluster: known(33),
      kubelets: kubelet(32),
      native: false,
      reason: `${AUTO_FIRST}: ${OLDEST} runs kubelet 1.32: ${GA}`,
    },
    {
      name: "auto, the pod's own node",
      mode: 'auto',
      cluster: known(33),
      kubelets: kubelet(33, 'node "n1"'),
      native: true,
      reason:
        'the companion is a native sidecar (placement auto, 1.33+): the API server runs Kubernetes 1.33 and node "n1" runs kubelet 1.33',
    },
    {
      name: 'auto, kubelets newer than an API server below 1.33 (never by skew rules, still decided)',
      mode: 'auto',
      cluster: known(32),
      kubelets: kubelet(33),
      native: false,
      reason: `${AUTO_FIRST}: the API server runs Kubernetes 1.32: ${GA}`,
    },
    {
      name: 'auto, 1.30',
      mode: 'auto',
      cluster: known(30),
      native: false,
      reason: `${AUTO_FIRST}: the cluster runs Kubernetes 1.30: ${GA}`,
    },
    {
      name: 'auto, 1.28 with the gate',
      mode: 'auto',
      cluster: known(28, true),
      native: false,
      reason: `${AUTO_FIRST}: the cluster runs Kubernetes 1.28 with the SidecarContainers gate: ${GA}`,
    },
    {
      name: 'auto, 1.26',
      mode: 'auto',
      cluster: known(26),
      native: false,
      reason: `${AUTO_FIRST}: the cluster runs Kubernetes 1.26, which has no native sidecars`,
    },
    {
      name: 'auto, a kubelet 1.27 under a 1.30 API server',
      mode: 'auto',
      cluster: known(30),
      kubelets: kubelet(27),
      native: false,
      reason: `${AUTO_FIRST}: ${OLDEST} runs kubelet 1.27, which has no native sidecars`,
    },
    {
      name: 'auto, inject without --kube-version',
      mode: 'auto',
      cluster: UNCHECKED,
      native: false,
      reason: `${AUTO_FIRST}: the Kubernetes version is not known: with --kube-version 1.33+ it is a native sidecar`,
    },
    {
      name: 'auto, the webhook not knowing the version',
      mode: 'auto',
      cluster: VERSION_UNKNOWN,
      kubelets: kubelet(33),
      native: false,
      reason: `${AUTO_FIRST}: the Kubernetes version is not known (GET /version: connect ECONNREFUSED)`,
    },
    {
      name: 'auto, the webhook not knowing the kubelets',
      mode: 'auto',
      cluster: known(33),
      kubelets: NODES_UNKNOWN,
      native: false,
      reason: `${AUTO_FIRST}: the kubelets' versions are not known (nodes not listed yet)`,
    },
    {
      name: 'native-sidecar, 1.26',
      mode: 'native-sidecar',
      cluster: known(26),
      native: false,
      reason: `${NOT_NATIVE}: the cluster runs Kubernetes 1.26, which has no native sidecars`,
    },
    {
      name: 'native-sidecar, 1.28 without the gate',
      mode: 'native-sidecar',
      cluster: known(28),
      native: false,
      reason: `${NOT_NATIVE}: the cluster runs Kubernetes 1.28, which has native sidecars only with --sidecar-containers-gate`,
    },
    {
      name: 'native-sidecar, 1.28 with the gate',
      mode: 'native-sidecar',
      cluster: known(28, true),
      native: true,
      reason:
        'the companion is a native sidecar (placement native-sidecar): the cluster runs Kubernetes 1.28 with the SidecarContainers gate',
    },
    {
      name: 'native-sidecar, 1.29',
      mode: 'native-sidecar',
      cluster: known(29),
      native: true,
      reason:
        'the companion is a native sidecar (placement native-sidecar): the cluster runs Kubernetes 1.29',
    },
    {
      name: 'native-sidecar, 1.33, the gate flag needless',
      mode: 'native-sidecar',
      cluster: known(33, true),
      native: true,
      reason:
        'the companion is a native sidecar (placement native-sidecar): the cluster runs Kubernetes 1.33',
    },
    {
      name: 'native-sidecar, API server 1.30, a kubelet 1.28: the kubelet decides',
      mode: 'native-sidecar',
      cluster: known(30),
      kubelets: kubelet(28),
      native: false,
      reason: `${NOT_NATIVE}: ${OLDEST} runs kubelet 1.28, which has native sidecars only with --sidecar-containers-gate`,
    },
    {
      name: 'native-sidecar, API server 1.30, kubelets 1.29',
      mode: 'native-sidecar',
      cluster: known(30),
      kubelets: kubelet(29),
      native: true,
      reason: `the companion is a native sidecar (placement native-sidecar): the API server runs Kubernetes 1.30 and ${OLDEST} runs kubelet 1.29`,
    },
    {
      name: 'native-sidecar, version unknown: no guess',
      mode: 'native-sidecar',
      cluster: VERSION_UNKNOWN,
      native: false,
      reason: `${NOT_NATIVE}: the Kubernetes version is not known (GET /version: connect ECONNREFUSED)`,
    },
    {
      name: 'native-sidecar, kubelets unknown: no guess',
      mode: 'native-sidecar',
      cluster: known(30),
      kubelets: NODES_UNKNOWN,
      native: false,
      reason: `${NOT_NATIVE}: the kubelets' versions are not known (nodes not listed yet)`,
    },
    {
      name: 'native-sidecar, unchecked: as asked, saying what it needs',
      mode: 'native-sidecar',
      cluster: UNCHECKED,
      native: true,
      reason:
        'the companion is a native sidecar (placement native-sidecar), unchecked: it needs Kubernetes 1.29+, or 1.28 with the SidecarContainers feature gate; older API servers refuse the pod, older kubelets never start it (--kube-version checks)',
    },
    {
      name: 'first, 1.33',
      mode: 'first',
      cluster: known(33),
      kubelets: kubelet(34),
      native: false,
      reason: `${FIRST} (placement first)`,
    },
  ])('$name', ({ mode, cluster, kubelets = UNCHECKED, native, reason }) => {
    expect(choosePlacement(mode, cluster, kubelets)).toEqual({ native, reason });
  });
});

const CLUSTERS: ClusterKnowledge[] = [
  ...[16, 24, 27, 28, 29, 32, 33, 36].flatMap((minor) => [known(minor), known(minor, true)]),
  VERSION_UNKNOWN,
  UNCHECKED,
];
const KUBELETS: KubeletKnowledge[] = [
  ...[16, 24, 27, 28, 29, 32, 33, 36].map((minor) => kubelet(minor)),
  NODES_UNKNOWN,
  UNCHECKED,
];
const describeKnowledge = (k: ClusterKnowledge | KubeletKnowledge): string =>
  k.state === 'known' ? `1.${k.version.minor}${'sidecarGate' in k && k.sidecarGate ? '+gate' : ''}` : k.state;

/** The rule, said once more in other words: the versions that must have them, or undefined when not known. */
function versionsOf(
  cluster: ClusterKnowledge,
  kubelets: KubeletKnowledge,
): KubeVersion[] | 'unknown' | 'unchecked' {
  if (cluster.state === 'unknown' || kubelets.state === 'unknown') return 'unknown';
  if (cluster.state === 'unchecked') return 'unchecked';
  return kubelets.state === 'known' ? [cluster.version, kubelets.version] : [cluster.version];
}

function expectedNative(mode: PlacementMode, cluster: ClusterKnowledge, kubelets: KubeletKnowledge): boolean {
  if (mode === 'first') return false;
  const gate = cluster.state === 'known' && cluster.sidecarGate;
  const bar = mode === 'auto' ? hasGaNativeSidecars : (v: KubeVersion) => hasNativeSidecars(v, gate);
  const knownVersions = [cluster, kubelets].flatMap((k) => (k.state === 'known' ? [k.version] : []));
  if (knownVersions.some((v) => !bar(v))) return false;
  const versions = versionsOf(cluster, kubelets);
  if (versions === 'unknown') return false;
  if (versions === 'unchecked') return mode === 'native-sidecar';
  return versions.every(bar);
}

describe('choosePlacement, every mode, API server and kubelet', () => {
  const cases = PLACEMENT_MODES.flatMap((mode) =>
    CLUSTERS.flatMap((cluster) =>
      KUBELETS.map((kubelets) => ({
        name: `${mode}, API server ${describeKnowledge(cluster)}, kubelets ${describeKnowledge(kubelets)}`,
        mode,
        cluster,
        kubelets,
      })),
    ),
  );
  it.each(cases)('$name', ({ mode, cluster, kubelets }) => {
    const { native, reason } = choosePlacement(mode, cluster, kubelets);
    expect(native).toBe(expectedNative(mode, cluster, kubelets));
    // Never where a known API server or kubelet lacks them, whatever the mode.
    for (const k of [cluster, kubelets]) {
      if (
        k.state === 'known' &&
        !hasNativeSidecars(k.version, cluster.state === 'known' && cluster.sidecarGate)
      ) {
        expect(native).toBe(false);
      }
    }
    // The line says which, and names every version that decided it.
    expect(reason).not.toMatch(/\n/);
    expect(reason.startsWith(native ? 'the companion is a native sidecar' : FIRST)).toBe(true);
    if (native && cluster.state === 'known' && kubelets.state === 'known')
      expect(reason).toContain(`${OLDEST} runs kubelet`);
    if (!native && mode !== 'first' && cluster.state === 'known' && kubelets.state !== 'unknown') {
      expect(reason).toMatch(/runs (Kubernetes|kubelet) 1\.\d+/);
    }
  });
});

describe('no version, gate or flag gives a pod the API server refuses', () => {
  // A pod with every probe kind, gRPC among them, and an init container of its own.
  const spec: PodSpec = {
    initContainers: [{ name: 'migrate', image: 'm:1' }],
    containers: [
      {
        name: 'app',
        image: 'a:1',
        livenessProbe: { httpGet: { path: '/live', port: 8080 } },
        readinessProbe: { tcpSocket: { port: 8080 } },
        startupProbe: { grpc: { port: 9090 } },
      },
    ],
  };
  const cases = Array.from({ length: 36 - 16 + 1 }, (_, i) => 16 + i).flatMap((minor) =>
    [false, true].flatMap((sidecarGate) => PLACEMENT_MODES.map((mode) => ({ minor, sidecarGate, mode }))),
  );

  it.each(cases)('1.$minor, gate $sidecarGate, --placement $mode', ({ minor, sidecarGate, mode }) => {
    const version = { major: 1, minor };
    const cluster: ClusterKnowledge = { state: 'known', version, sidecarGate };
    const placement = choosePlacement(mode, cluster, UNCHECKED);
    const result = rewritePodSpec(spec, undefined, { image: 'hc:1', placement: mode, cluster }, 'Pod/p');
    expect(result.placement?.companion).toBe(placement.native ? 'native-sidecar' : 'first');
    expect(apiServerRefusals(spec, version, sidecarGate).length > 0).toBe(minor < 24);
    expect(apiServerRefusals(result.spec, version, sidecarGate)).toEqual([]);
    const names = (list: Container[] | undefined) => (list ?? []).map((c) => c.name);
    if (placement.native) {
      expect(names(result.spec.initContainers)).toEqual([INIT_NAME, COMPANION_NAME, 'migrate']);
    } else {
      expect(names(result.spec.initContainers)).toEqual([INIT_NAME, 'migrate']);
      expect(names(result.spec.containers)).toEqual([COMPANION_NAME, 'app']);
      expect(result.spec.containers?.[0]?.lifecycle).toEqual({
        postStart: { exec: { command: [...WAIT_COMMAND] } },
      });
    }
  });
});

describe('rewritePodSpec reads the kubelets from RewriteOptions.kubelets (the webhook: a watch of nodes)', () => {
  const app: Container = { name: 'app', image: 'a:1', readinessProbe: { tcpSocket: { port: 8080 } } };
  it.each<{ name: string; restartPolicy: string; kubelets?: KubeletKnowledge; companion: string }>([
    {
      name: 'no kubelets given: the API server 1.33 stands for them',
      restartPolicy: 'Always',
      companion: 'native-sidecar',
    },
    {
      name: 'the oldest kubelet 1.33',
      restartPolicy: 'Always',
      kubelets: kubelet(33),
      companion: 'native-sidecar',
    },
    {
      name: 'the oldest kubelet 1.32: mid-upgrade',
      restartPolicy: 'Always',
      kubelets: kubelet(32),
      companion: 'first',
    },
    {
      name: 'the kubelets not known yet',
      restartPolicy: 'Always',
      kubelets: NODES_UNKNOWN,
      companion: 'first',
    },
    {
      name: 'a Job, kubelet 1.29',
      restartPolicy: 'Never',
      kubelets: kubelet(29),
      companion: 'native-sidecar',
    },
    { name: 'a Job, kubelet 1.27', restartPolicy: 'Never', kubelets: kubelet(27), companion: 'untouched' },
    {
      name: 'a Job, the kubelets not known yet',
      restartPolicy: 'Never',
      kubelets: NODES_UNKNOWN,
      companion: 'untouched',
    },
  ])('$name: $companion', ({ restartPolicy, kubelets, companion }) => {
    const spec: PodSpec = { restartPolicy, containers: [app] };
    const options = {
      image: 'hc:1',
      placement: 'auto' as const,
      cluster: known(33),
      ...(kubelets ? { kubelets } : {}),
    };
    const result = rewritePodSpec(spec, undefined, options, 'Pod/p');
    expect(result.placement?.companion).toBe(companion);
    expect(result.changed).toBe(companion !== 'untouched');
  });
});
