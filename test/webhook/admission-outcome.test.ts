// What admit() says became of each admission, for the metrics: every outcome and reason of the fixed sets, each
// reached through the real rewrite, and the mapping of the rewrite's causes as a table.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RewriteOptions } from '../../src/rewrite/types.js';
import {
  type AdmissionOutcome,
  OUTCOME_PAIRS,
  podOutcome,
  untouchedReason,
} from '../../src/webhook/admission-outcome.js';
import { admit } from '../../src/webhook/admit.js';
import type { AdmissionRequest } from '../../src/webhook/review.js';
import { REWRITE } from './harness.js';

type Json = Record<string, unknown>;

const POD = { group: '', version: 'v1', kind: 'Pod' };
const request = (object: unknown, more: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  uid: 'u-1',
  kind: POD,
  operation: 'CREATE',
  namespace: 'ns',
  object,
  ...more,
});
const pod = (spec: Json = {}, annotations?: Record<string, string>): Json => ({
  metadata: { name: 'web', ...(annotations === undefined ? {} : { annotations }) },
  spec: { containers: [{ name: 'app', livenessProbe: { tcpSocket: { port: 8080 } } }], ...spec },
});
const restricted: RewriteOptions = {
  ...REWRITE,
  podSecurity: {
    state: 'known',
    policy: { level: 'restricted', version: 'latest', source: 'the namespace label' },
  },
};
/** The pod inject makes of pod(): the webhook's own output, sent again (reinvocation). */
function injected(): Json {
  const first = admit(request(pod()), REWRITE);
  const ops = JSON.parse(Buffer.from(first.response.patch ?? '', 'base64').toString()) as Json[];
  const applied = structuredClone(pod()) as Json;
  for (const op of ops) {
    const path = String(op.path).split('/').slice(1);
    const last = path.pop() as string;
    const parent = path.reduce<Json>((node, key) => node[key] as Json, applied);
    if (Array.isArray(parent) && last === '-') parent.push(op.value);
    else if (Array.isArray(parent)) parent.splice(Number(last), op.op === 'replace' ? 1 : 0, op.value);
    else parent[last] = op.value;
  }
  return applied;
}
const osmEdgePod = parse(
  readFileSync(new URL('../fixtures/osm-edge/shop.osm-edge.yaml', import.meta.url), 'utf8'),
);

const CASES: Array<{
  name: string;
  req: () => AdmissionRequest;
  options?: RewriteOptions;
  outcome: AdmissionOutcome;
}> = [
  {
    name: 'a pod with a probe',
    req: () => request(pod()),
    outcome: { outcome: 'injected', reason: 'patched' },
  },
  {
    name: 'the opt-out annotation',
    req: () => request(pod({}, { 'osm-healthcheck/rewrite-probes': 'false' })),
    outcome: { outcome: 'untouched', reason: 'opted_out' },
  },
  {
    name: "an osm-edge pod (their sidecar answers on the companion's ports)",
    req: () => request(osmEdgePod, { namespace: 'shop' }),
    outcome: { outcome: 'untouched', reason: 'mesh_pod' },
  },
  {
    name: 'hostNetwork',
    req: () => request(pod({ hostNetwork: true })),
    outcome: { outcome: 'untouched', reason: 'host_network' },
  },
  {
    name: 'a Windows pod',
    req: () => request(pod({ os: { name: 'windows' } })),
    outcome: { outcome: 'untouched', reason: 'windows' },
  },
  {
    name: 'Pod Security restricted, no mesh annotation',
    req: () => request(pod()),
    options: restricted,
    outcome: { outcome: 'untouched', reason: 'pod_security' },
  },
  {
    name: 'a ResourceQuota without room for the companion',
    req: () => request(pod()),
    options: {
      ...REWRITE,
      namespaceRules: {
        state: 'known',
        namespace: 'ns',
        limitRanges: [],
        resourceQuotas: [
          { metadata: { name: 'q', namespace: 'ns' }, spec: { hard: { 'requests.cpu': '10m' } } },
        ],
      },
    },
    outcome: { outcome: 'untouched', reason: 'admission_rule' },
  },
  {
    name: "the namespace's rules not listed yet",
    req: () => request(pod()),
    options: {
      ...REWRITE,
      namespaceRules: { state: 'unknown', namespace: 'ns', why: 'limitranges not listed yet' },
    },
    outcome: { outcome: 'untouched', reason: 'namespace_not_known' },
  },
  {
    name: "the namespace's Pod Security level not known yet",
    req: () => request(pod()),
    options: {
      ...REWRITE,
      podSecurity: { state: 'unknown', namespace: 'ns', why: 'namespaces not listed yet' },
    },
    outcome: { outcome: 'untouched', reason: 'namespace_not_known' },
  },
  {
    name: 'a pod that must end, the version not known',
    req: () => request(pod({ restartPolicy: 'Never' })),
    outcome: { outcome: 'untouched', reason: 'run_to_completion' },
  },
  {
    name: 'a pod that must end, on 1.27 (no native sidecars)',
    req: () => request(pod({ restartPolicy: 'OnFailure' })),
    options: {
      ...REWRITE,
      cluster: { state: 'known', version: { major: 1, minor: 27 }, sidecarGate: false },
    },
    outcome: { outcome: 'untouched', reason: 'run_to_completion' },
  },
  {
    name: 'a pod that must end, its kubelets not known',
    req: () => request(pod({ restartPolicy: 'Never' })),
    options: {
      ...REWRITE,
      cluster: { state: 'known', version: { major: 1, minor: 33 }, sidecarGate: false },
      kubelets: { state: 'unknown', why: 'nodes not listed yet' },
    },
    outcome: { outcome: 'untouched', reason: 'run_to_completion' },
  },
  {
    name: 'no probe',
    req: () => request({ metadata: { name: 'web' }, spec: { containers: [{ name: 'app' }] } }),
    outcome: { outcome: 'untouched', reason: 'no_probe' },
  },
  {
    name: 'only an exec probe',
    req: () =>
      request({
        metadata: { name: 'web' },
        spec: { containers: [{ name: 'app', livenessProbe: { exec: { command: ['true'] } } }] },
      }),
    outcome: { outcome: 'untouched', reason: 'no_probe' },
  },
  {
    name: 'our own output again (reinvocation)',
    req: () => request(injected()),
    outcome: { outcome: 'untouched', reason: 'already_injected' },
  },
  {
    name: 'a Deployment (warnings only)',
    req: () =>
      request(
        { metadata: { name: 'web' }, spec: { template: { spec: pod().spec } } },
        { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } },
      ),
    outcome: { outcome: 'untouched', reason: 'workload' },
  },
  {
    name: 'a subresource',
    req: () => request(pod(), { subResource: 'ephemeralcontainers' }),
    outcome: { outcome: 'untouched', reason: 'not_a_pod' },
  },
  {
    name: 'a DELETE',
    req: () => request(pod(), { operation: 'DELETE' }),
    outcome: { outcome: 'untouched', reason: 'not_a_pod' },
  },
  {
    name: 'an annotation the rewrite refuses',
    req: () => request(pod({}, { 'osm-healthcheck/memory-limit': '0' })),
    outcome: { outcome: 'error', reason: 'invalid_pod' },
  },
  {
    name: 'a container named as ours',
    req: () =>
      request(pod({ containers: [{ name: 'osm-healthcheck', livenessProbe: { tcpSocket: { port: 1 } } }] })),
    outcome: { outcome: 'error', reason: 'invalid_pod' },
  },
];

describe('admit: what became of the admission', () => {
  it.each(CASES)('$name: $outcome.outcome $outcome.reason', ({ req, options, outcome }) => {
    expect(admit(req(), options ?? REWRITE).outcome).toEqual(outcome);
  });

  it('reaches every pair of the fixed sets but internal and bad_request (app.ts counts those)', () => {
    const reached = new Set(CASES.map((c) => `${c.outcome.outcome}/${c.outcome.reason}`));
    const unreached = OUTCOME_PAIRS.map((p) => `${p.outcome}/${p.reason}`).filter((p) => !reached.has(p));
    expect(unreached).toEqual(['error/bad_request', 'error/internal']);
  });
});

describe('untouchedReason', () => {
  const unknownLevel = { state: 'unknown', namespace: 'ns', why: 'x' } as const;
  const unknownRules = { state: 'unknown', namespace: 'ns', why: 'x' } as const;
  it.each([
    { cause: 'run-to-completion', knew: {}, is: 'run_to_completion' },
    { cause: 'host-network', knew: {}, is: 'host_network' },
    { cause: 'windows', knew: {}, is: 'windows' },
    { cause: 'osm-mesh', knew: {}, is: 'mesh_pod' },
    { cause: 'pod-security', knew: {}, is: 'pod_security' },
    { cause: 'pod-security', knew: { podSecurity: unknownLevel }, is: 'namespace_not_known' },
    { cause: 'pod-security', knew: { namespaceRules: unknownRules }, is: 'pod_security' },
    { cause: 'admission-rules', knew: {}, is: 'admission_rule' },
    { cause: 'admission-rules', knew: { namespaceRules: unknownRules }, is: 'namespace_not_known' },
  ] as const)('$cause, knowing $knew: $is', ({ cause, knew, is }) => {
    expect(untouchedReason({ companion: 'untouched', cause, reason: 'r', warn: true }, knew)).toBe(is);
  });
});

describe('podOutcome', () => {
  it.each([
    { name: 'patched', patched: true, answered: true, is: { outcome: 'injected', reason: 'patched' } },
    {
      name: 'no patch, a table',
      patched: false,
      answered: true,
      is: { outcome: 'untouched', reason: 'already_injected' },
    },
    {
      name: 'no patch, no table',
      patched: false,
      answered: false,
      is: { outcome: 'untouched', reason: 'no_probe' },
    },
  ])('$name', ({ patched, answered, is }) => {
    expect(podOutcome({ companion: 'first', reason: 'x' }, patched, answered, {})).toEqual(is);
  });
});
