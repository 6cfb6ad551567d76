// Where the companion goes, for every Kubernetes version and what is known of it: a native sidecar only where
// the cluster has them, never a guess while the version is unknown, the reason in words, and for every version
// from 1.16 to 1.33 a rewritten pod that version's API server accepts.

import { describe, expect, it } from 'vitest';
import { COMPANION_NAME, INIT_NAME, WAIT_COMMAND } from '../../src/rewrite/companion.js';
import { type ClusterKnowledge, choosePlacement, hasNativeSidecars } from '../../src/rewrite/placement.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import type { Container, PodSpec } from '../../src/rewrite/types.js';
import { apiServerRefusals } from '../helpers/api-server.js';

const known = (minor: number, sidecarGate = false): ClusterKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  sidecarGate,
});

const FIRST = 'the companion goes first among the containers, with a postStart hook that waits for it';

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

describe('choosePlacement', () => {
  it.each<{ name: string; asked: boolean; cluster: ClusterKnowledge; native: boolean; reason: string }>([
    {
      name: 'asked, 1.26',
      asked: true,
      cluster: known(26),
      native: false,
      reason: `${FIRST}, not a native sidecar: Kubernetes 1.26 has no native sidecars (they need Kubernetes 1.29+, or 1.28 with the SidecarContainers feature gate)`,
    },
    {
      name: 'asked, 1.28 without the gate',
      asked: true,
      cluster: known(28),
      native: false,
      reason: `${FIRST}, not a native sidecar: Kubernetes 1.28 has native sidecars only with the SidecarContainers feature gate, which --sidecar-containers-gate says is on`,
    },
    {
      name: 'asked, 1.28 with the gate',
      asked: true,
      cluster: known(28, true),
      native: true,
      reason:
        'the companion is a native sidecar: Kubernetes 1.28 with the SidecarContainers feature gate has them',
    },
    {
      name: 'asked, 1.29',
      asked: true,
      cluster: known(29),
      native: true,
      reason: 'the companion is a native sidecar: Kubernetes 1.29 has them',
    },
    {
      name: 'asked, 1.33, the gate flag needless',
      asked: true,
      cluster: known(33, true),
      native: true,
      reason: 'the companion is a native sidecar: Kubernetes 1.33 has them',
    },
    {
      name: 'asked, version unknown: no guess',
      asked: true,
      cluster: { state: 'unknown', why: 'GET /version: connect ECONNREFUSED' },
      native: false,
      reason: `${FIRST}, not a native sidecar: the Kubernetes version is not known (GET /version: connect ECONNREFUSED)`,
    },
    {
      name: 'asked, unchecked: as asked, saying what it needs',
      asked: true,
      cluster: { state: 'unchecked' },
      native: true,
      reason:
        'the companion is a native sidecar, as asked: that needs Kubernetes 1.29+, or 1.28 with the SidecarContainers feature gate; older API servers refuse the pod (--kube-version checks)',
    },
    {
      name: 'not asked, unchecked',
      asked: false,
      cluster: { state: 'unchecked' },
      native: false,
      reason: FIRST,
    },
    {
      name: 'not asked, unknown',
      asked: false,
      cluster: { state: 'unknown', why: 'x' },
      native: false,
      reason: FIRST,
    },
    {
      name: 'not asked, 1.26',
      asked: false,
      cluster: known(26),
      native: false,
      reason: `${FIRST}: Kubernetes 1.26 has no native sidecars (they need Kubernetes 1.29+, or 1.28 with the SidecarContainers feature gate)`,
    },
    {
      name: 'not asked, 1.30: says what --native-sidecar would do',
      asked: false,
      cluster: known(30),
      native: false,
      reason: `${FIRST} (Kubernetes 1.30 has native sidecars: --native-sidecar uses one)`,
    },
  ])('$name', ({ asked, cluster, native, reason }) => {
    expect(choosePlacement(asked, cluster)).toEqual({ native, reason });
  });

  it('never a native sidecar where the cluster is known to lack them, whatever is asked', () => {
    for (let minor = 16; minor <= 40; minor++) {
      for (const gate of [false, true]) {
        for (const asked of [false, true]) {
          const { native } = choosePlacement(asked, known(minor, gate));
          expect(native, `1.${minor} gate ${gate} asked ${asked}`).toBe(
            asked && (minor >= 29 || (minor === 28 && gate)),
          );
        }
      }
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
  const cases = Array.from({ length: 33 - 16 + 1 }, (_, i) => 16 + i).flatMap((minor) =>
    [false, true].flatMap((sidecarGate) => [false, true].map((asked) => ({ minor, sidecarGate, asked }))),
  );

  it.each(cases)('1.$minor, gate $sidecarGate, --native-sidecar $asked', ({ minor, sidecarGate, asked }) => {
    const version = { major: 1, minor };
    const placement = choosePlacement(asked, { state: 'known', version, sidecarGate });
    const result = rewritePodSpec(
      spec,
      undefined,
      { image: 'hc:1', nativeSidecar: placement.native },
      'Pod/p',
    );
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
