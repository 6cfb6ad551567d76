// Where the companion goes in one pod, over every combination of restartPolicy, annotation, --placement, what
// is known of the API server and of the kubelets, and an earlier inject's companion: a pod that must end never
// gets the companion as an ordinary container it would wait for forever, never a native sidecar an API server
// would refuse or a kubelet would run as an init container that never ends, and an untouched pod says why,
// unless the annotation asked for it.

import { describe, expect, it } from 'vitest';
import { HealthcheckError } from '../../src/errors.js';
import { injectManifests } from '../../src/manifest/inject.js';
import {
  type ClusterKnowledge,
  choosePlacement,
  hasNativeSidecars,
  type KubeletKnowledge,
  PLACEMENT_MODES,
} from '../../src/rewrite/placement.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import {
  type CompanionInputs,
  decideCompanion,
  type ExistingCompanion,
  podFacts,
  RESTART_POLICIES,
  type RunToCompletionForce,
  readRunToCompletion,
} from '../../src/rewrite/run-to-completion.js';
import type { PodSpec } from '../../src/rewrite/types.js';
import { apiServerRefusals } from '../helpers/api-server.js';

const known = (minor: number, sidecarGate = false): ClusterKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  sidecarGate,
});
const CLUSTERS: { name: string; cluster: ClusterKnowledge }[] = [
  { name: '1.26', cluster: known(26) },
  { name: '1.28', cluster: known(28) },
  { name: '1.28+gate', cluster: known(28, true) },
  { name: '1.29', cluster: known(29) },
  { name: '1.33', cluster: known(33) },
  { name: 'unknown', cluster: { state: 'unknown', why: 'GET /version: connect ECONNREFUSED' } },
  { name: 'unchecked', cluster: { state: 'unchecked' } },
];
// A longer node name makes a longer line: the webhook shortens what passes the API server's limit.
const OLDEST = 'the oldest of 12 nodes ("worker-17")';
const kubelet = (minor: number): KubeletKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  source: OLDEST,
});
const KUBELETS: { name: string; kubelets: KubeletKnowledge }[] = [
  { name: 'kubelets unchecked', kubelets: { state: 'unchecked' } },
  { name: 'kubelets unknown', kubelets: { state: 'unknown', why: 'nodes not listed yet' } },
  { name: 'kubelet 1.27', kubelets: kubelet(27) },
  { name: 'kubelet 1.28', kubelets: kubelet(28) },
  { name: 'kubelet 1.29', kubelets: kubelet(29) },
  { name: 'kubelet 1.33', kubelets: kubelet(33) },
];
const FORCES: (RunToCompletionForce | undefined)[] = [undefined, 'native-sidecar', 'skip'];
const EXISTING: ExistingCompanion[] = ['none', 'container', 'native-sidecar'];

/** The rule, said once more in other words, for every combination. */
function expected(inputs: CompanionInputs): 'native-sidecar' | 'first' | 'untouched' {
  const { restartPolicy, force, placement, cluster, kubelets, existing } = inputs;
  if (restartPolicy === 'Always')
    return choosePlacement(placement, cluster, kubelets).native ? 'native-sidecar' : 'first';
  if (force === 'skip') return 'untouched';
  if (lacks(inputs)) return 'untouched';
  if (cluster.state === 'known' && kubelets.state !== 'unknown') return 'native-sidecar';
  const vouched =
    force === 'native-sidecar' ||
    existing === 'native-sidecar' ||
    (cluster.state === 'unchecked' && kubelets.state !== 'unknown' && placement === 'native-sidecar');
  return vouched ? 'native-sidecar' : 'untouched';
}

/** A known API server or kubelet has no native sidecars (the gate counts for both). */
function lacks({ cluster, kubelets }: CompanionInputs): boolean {
  const gate = cluster.state === 'known' && cluster.sidecarGate;
  return [cluster, kubelets].some((k) => k.state === 'known' && !hasNativeSidecars(k.version, gate));
}

const combinations = RESTART_POLICIES.flatMap((restartPolicy) =>
  FORCES.flatMap((force) =>
    PLACEMENT_MODES.flatMap((placement) =>
      CLUSTERS.flatMap(({ name, cluster }) =>
        KUBELETS.flatMap((k) =>
          EXISTING.map((existing) => ({
            name: `${restartPolicy}, annotation ${force ?? 'unset'}, --placement ${placement}, ${name}, ${k.name}, earlier companion ${existing}`,
            inputs: { restartPolicy, force, placement, cluster, kubelets: k.kubelets, existing },
          })),
        ),
      ),
    ),
  ),
);

describe('decideCompanion, every combination', () => {
  it.each(combinations)('$name', ({ inputs }) => {
    const decision = decideCompanion(inputs);
    expect(decision.companion).toBe(expected(inputs));
    // A pod that must end never gets an ordinary companion.
    if (inputs.restartPolicy !== 'Always') expect(decision.companion).not.toBe('first');
    // Never a native sidecar where the API server or a kubelet is known to lack them.
    if (lacks(inputs)) expect(decision.companion).not.toBe('native-sidecar');
    // One line, and a warning short: the webhook cuts any past the API server's 256 (src/webhook/warnings.ts).
    expect(decision.reason).not.toMatch(/\n/);
    if (decision.companion === 'untouched') {
      expect(decision.reason.length, decision.reason).toBeLessThanOrEqual(234);
      // Silent only where the annotation asked for it and no earlier companion blocks the pod.
      expect(decision.warn).toBe(!(inputs.force === 'skip' && inputs.existing !== 'container'));
    }
  });
});

describe('decideCompanion, the reasons', () => {
  const job = {
    restartPolicy: 'Never' as const,
    force: undefined,
    placement: 'auto' as const,
    kubelets: { state: 'unchecked' } as const,
    existing: 'none' as const,
  };
  const NEVER = 'restartPolicy Never';
  const NATIVE = `${NEVER}: the companion is a native sidecar, which kubelet stops once the containers end`;
  const NEVER_COMPLETE = 'a companion container would never let the pod complete';
  it.each([
    {
      name: 'a Job at 1.29',
      inputs: { ...job, cluster: known(29) },
      reason: `${NATIVE}: the cluster runs Kubernetes 1.29`,
    },
    {
      name: 'a Job at 1.29 whatever the placement of running pods: first',
      inputs: { ...job, placement: 'first' as const, cluster: known(29) },
      reason: `${NATIVE}: the cluster runs Kubernetes 1.29`,
    },
    {
      name: 'a Job at 1.26',
      inputs: { ...job, cluster: known(26) },
      reason: `${NEVER}: left untouched, as the cluster runs Kubernetes 1.26, which has no native sidecars: ${NEVER_COMPLETE}`,
    },
    {
      name: 'a Job at 1.28 without the gate',
      inputs: { ...job, cluster: known(28) },
      reason: `${NEVER}: left untouched, as the cluster runs Kubernetes 1.28, which has native sidecars only with --sidecar-containers-gate: ${NEVER_COMPLETE}`,
    },
    {
      name: 'a Job, API server 1.30, every kubelet 1.29+',
      inputs: { ...job, cluster: known(30), kubelets: kubelet(29) },
      reason: `${NATIVE}: the API server runs Kubernetes 1.30 and ${OLDEST} runs kubelet 1.29`,
    },
    {
      name: 'a Job, API server 1.30, a kubelet 1.27: it would never start the containers',
      inputs: { ...job, cluster: known(30), kubelets: kubelet(27) },
      reason: `${NEVER}: left untouched, as ${OLDEST} runs kubelet 1.27, which has no native sidecars: it would never start the containers`,
    },
    {
      name: 'a Job, the webhook not knowing the kubelets yet',
      inputs: {
        ...job,
        cluster: known(30),
        kubelets: { state: 'unknown', why: 'nodes not listed yet' } as const,
      },
      reason: `${NEVER}: left untouched, as the kubelets' versions are not known (nodes not listed yet): if every kubelet is 1.29+, annotate osm-healthcheck/run-to-completion: native-sidecar`,
    },
    {
      name: 'a Job, the kubelets not known, the annotation vouching',
      inputs: {
        ...job,
        force: 'native-sidecar' as const,
        cluster: known(30),
        kubelets: { state: 'unknown', why: 'nodes not listed yet' } as const,
      },
      reason: `${NATIVE}: osm-healthcheck/run-to-completion asks for one`,
    },
    {
      name: 'a Job, inject without --kube-version',
      inputs: { ...job, cluster: { state: 'unchecked' } as const },
      reason: `${NEVER}: left untouched, as the Kubernetes version is not known: pass --kube-version or --placement native-sidecar, or annotate osm-healthcheck/run-to-completion: native-sidecar`,
    },
    {
      name: 'a Job, inject --placement native-sidecar without --kube-version',
      inputs: { ...job, placement: 'native-sidecar' as const, cluster: { state: 'unchecked' } as const },
      reason: `${NATIVE}: --placement native-sidecar vouches for the cluster`,
    },
    {
      name: 'a Job, the webhook not knowing the version (a long reason is cut)',
      inputs: { ...job, cluster: { state: 'unknown', why: `GET /version: ${'x'.repeat(200)}` } as const },
      reason: `${NEVER}: left untouched, as the Kubernetes version is not known (GET /version: ${'x'.repeat(45)}…): if it is 1.29+, annotate osm-healthcheck/run-to-completion: native-sidecar`,
    },
    {
      name: 'the annotation asks for a native sidecar at 1.26',
      inputs: { ...job, force: 'native-sidecar' as const, cluster: known(26) },
      reason: `${NEVER}: left untouched, as osm-healthcheck/run-to-completion is native-sidecar, but the cluster runs Kubernetes 1.26`,
    },
    {
      name: "an earlier release's ordinary companion at 1.26",
      inputs: { ...job, existing: 'container' as const, cluster: known(26) },
      reason: `${NEVER}: never completes: its companion container (an earlier inject's) never exits; kept, as the cluster runs Kubernetes 1.26, which has no native sidecars`,
    },
  ])('$name', ({ inputs, reason }) => {
    expect(decideCompanion(inputs).reason).toBe(reason);
  });
});

describe('the annotation and restartPolicy', () => {
  it.each([
    { name: 'unset', value: undefined, want: { force: undefined } },
    { name: 'native-sidecar', value: 'native-sidecar', want: { force: 'native-sidecar' } },
    { name: 'any case and spacing', value: ' Skip ', want: { force: 'skip' } },
    {
      name: 'anything else',
      value: 'true',
      want: { invalid: 'must be one of native-sidecar, skip, got "true"' },
    },
  ])('$name', ({ value, want }) => {
    const annotations: Record<string, string> =
      value === undefined ? {} : { 'osm-healthcheck/run-to-completion': value };
    expect(readRunToCompletion(annotations)).toEqual(want);
  });

  it('an invalid value stops inject, naming the annotation, the values allowed, the document and line', () => {
    const job = [
      'apiVersion: batch/v1',
      'kind: Job',
      'metadata: {name: j}',
      'spec:',
      '  template:',
      '    metadata:',
      '      annotations:',
      '        osm-healthcheck/run-to-completion: "yes"',
      '    spec:',
      '      restartPolicy: Never',
      '      containers: [{name: app, livenessProbe: {tcpSocket: {port: 80}}}]',
    ].join('\n');
    const run = () => injectManifests(job, { image: 'hc:1', placement: 'auto' }, 'yaml');
    expect(run).toThrow(HealthcheckError);
    expect(run).toThrow(
      'document 1, line 8: Job/j: spec.template.metadata.annotations.osm-healthcheck/run-to-completion: must be one of native-sidecar, skip, got "yes"',
    );
  });

  it('a restartPolicy Kubernetes does not know: a ManifestError naming it', () => {
    expect(() => podFacts({ restartPolicy: 'Sometimes', containers: [] }, undefined, 'Pod/p')).toThrow(
      'Pod/p: restartPolicy: must be one of Always, OnFailure, Never, got "Sometimes"',
    );
  });

  it('where an earlier inject put the companion', () => {
    const companion = { name: 'osm-healthcheck' };
    expect(podFacts({ containers: [companion] }, undefined, 'Pod/p').existing).toBe('container');
    expect(podFacts({ initContainers: [companion], containers: [] }, undefined, 'Pod/p').existing).toBe(
      'native-sidecar',
    );
    expect(podFacts({ containers: [{ name: 'app' }] }, undefined, 'Pod/p')).toEqual({
      restartPolicy: 'Always',
      force: undefined,
      existing: 'none',
    });
  });
});

describe('no version, gate, flag or restartPolicy gives a pod the API server refuses, or one that never ends', () => {
  const cases = Array.from({ length: 36 - 16 + 1 }, (_, i) => 16 + i).flatMap((minor) =>
    [false, true].flatMap((sidecarGate) =>
      RESTART_POLICIES.map((restartPolicy) => ({ minor, sidecarGate, restartPolicy })),
    ),
  );
  it.each(cases)('1.$minor, gate $sidecarGate, $restartPolicy', ({ minor, sidecarGate, restartPolicy }) => {
    const version = { major: 1, minor };
    const spec: PodSpec = {
      restartPolicy,
      containers: [{ name: 'app', image: 'a:1', livenessProbe: { httpGet: { path: '/live', port: 8080 } } }],
    };
    for (const placement of PLACEMENT_MODES) {
      const cluster: ClusterKnowledge = { state: 'known', version, sidecarGate };
      const result = rewritePodSpec(spec, undefined, { image: 'hc:1', placement, cluster }, 'Pod/p');
      expect(apiServerRefusals(result.spec, version, sidecarGate)).toEqual([]);
      const names = (result.spec.containers ?? []).map((c) => c.name);
      if (restartPolicy !== 'Always') expect(names).toEqual(['app']);
      expect(result.changed).toBe(restartPolicy === 'Always' || hasNativeSidecars(version, sidecarGate));
    }
  });
});
