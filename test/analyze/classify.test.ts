// classifyPod, table by table: every class and every untouched reason from a pod as the API server holds it, with
// the knowledge the webhook would have. The same rewritePodSpec decides here as in the webhook.

import { describe, expect, it } from 'vitest';
import {
  type Current,
  classifyPod,
  needsAction,
  type PodContext,
  UNTOUCHED_REASONS,
} from '../../src/analyze/classify.js';
import { DEFAULT_IMAGE } from '../../src/rewrite/companion.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import { RECORD_ANNOTATION, RECORD_VERSION } from '../../src/rewrite/record.js';
import type { PodSpec, RewriteOptions } from '../../src/rewrite/types.js';

type Json = Record<string, unknown>;

const OPTIONS: RewriteOptions = {
  image: DEFAULT_IMAGE,
  placement: 'auto',
  cluster: { state: 'known', version: { major: 1, minor: 36 }, sidecarGate: false },
  kubelets: { state: 'known', version: { major: 1, minor: 36 }, source: 'the only node' },
  podSecurity: { state: 'known', policy: { level: 'privileged', version: 'latest', source: 'label' } },
  namespaceRules: { state: 'known', namespace: 'shop', limitRanges: [], resourceQuotas: [] },
};
const CURRENT: Current = { image: DEFAULT_IMAGE, version: RECORD_VERSION };
const CONTEXT: PodContext = {
  current: CURRENT,
  selected: { namespace: true, object: true },
  options: OPTIONS,
};

const APP: PodSpec = {
  containers: [{ name: 'web', image: 'w', readinessProbe: { httpGet: { path: '/', port: 8080 } } }],
};

const pod = (spec: PodSpec, annotations?: Record<string, string>, status: Json = {}): Json => ({
  metadata: { name: 'p', namespace: 'shop', ...(annotations === undefined ? {} : { annotations }) },
  spec,
  status,
});

/** The pod as the webhook would have admitted it with `options`. */
function injected(options: Partial<RewriteOptions> = {}, strip = false): Json {
  const result = rewritePodSpec(APP, undefined, { ...OPTIONS, ...options }, 'Pod/p');
  const annotations = { ...result.annotations };
  if (strip) delete annotations[RECORD_ANNOTATION];
  return pod(result.spec, annotations);
}

describe('a pod with our companion', () => {
  it.each<{ name: string; pod: Json; current?: Current; class: string; detail: RegExp }>([
    {
      name: 'this release and image',
      pod: injected(),
      class: 'covered',
      detail: /^0\.\d+\.\d+, osm-healthcheck:/,
    },
    {
      name: 'another image than the webhook injects',
      pod: injected({ image: 'registry.example.com/hc:0.0.9' }),
      class: 'stale',
      detail: /companion image registry\.example\.com\/hc:0\.0\.9; the webhook injects osm-healthcheck:/,
    },
    {
      name: 'injected before records existed',
      pod: injected({}, true),
      class: 'stale',
      detail: /injected by a release before/,
    },
    {
      name: 'a record of another release',
      pod: injected(),
      current: { image: DEFAULT_IMAGE, version: '9.9.9' },
      class: 'stale',
      detail: /injected by 0\.\d+\.\d+; a pod created now gets 9\.9\.9/,
    },
    {
      name: 'the webhook image unknown: judged by the record',
      pod: injected({ image: 'anything:1' }),
      current: { image: undefined, version: RECORD_VERSION },
      class: 'covered',
      detail: /anything:1/,
    },
  ])('$name: $class', ({ pod: p, current = CURRENT, class: expected, detail }) => {
    const found = classifyPod(p, { ...CONTEXT, current });
    expect(found.class).toBe(expected);
    expect(found.detail).toMatch(detail);
  });

  it.each([
    { name: 'restarted', status: { restartCount: 2 }, detail: 'the companion restarted 2 times' },
    {
      name: 'OOM-killed once',
      status: { restartCount: 1, lastState: { terminated: { reason: 'OOMKilled' } } },
      detail: 'the companion restarted 1 time, last ended OOMKilled',
    },
  ])('a companion that $name is failing, whatever its release', ({ status, detail }) => {
    const p = injected({ image: 'old:1' });
    const withStatus = { ...p, status: { containerStatuses: [{ name: 'osm-healthcheck', ...status }] } };
    expect(classifyPod(withStatus, CONTEXT)).toEqual({ class: 'failing', detail });
  });

  it("a native sidecar's status is read from initContainerStatuses", () => {
    const p = injected({ placement: 'native-sidecar' });
    const status = { initContainerStatuses: [{ name: 'osm-healthcheck', restartCount: 4 }] };
    expect(classifyPod({ ...p, status }, CONTEXT).class).toBe('failing');
  });
});

describe('a pod without it', () => {
  it.each<{ name: string; pod: Json; context?: Partial<PodContext>; class: string; reason?: string }>([
    { name: 'probes the webhook would rewrite', pod: pod(APP), class: 'uncovered' },
    {
      name: 'opted out',
      pod: pod(APP, { 'osm-healthcheck/rewrite-probes': 'false' }),
      class: 'untouched',
      reason: 'opted-out',
    },
    {
      name: "left out by the webhook's objectSelector",
      pod: pod(APP),
      context: { selected: { namespace: true, object: false } },
      class: 'untouched',
      reason: 'not-selected',
    },
    {
      name: 'no probes',
      pod: pod({ containers: [{ name: 'w', image: 'w' }] }),
      class: 'untouched',
      reason: 'no-probe',
    },
    {
      name: 'hostNetwork',
      pod: pod({ ...APP, hostNetwork: true }),
      class: 'untouched',
      reason: 'host-network',
    },
    { name: 'Windows', pod: pod({ ...APP, os: { name: 'windows' } }), class: 'untouched', reason: 'windows' },
    {
      name: 'a Job on kubelets without native sidecars',
      pod: pod({ ...APP, restartPolicy: 'Never' }),
      context: {
        options: {
          ...OPTIONS,
          cluster: { state: 'known', version: { major: 1, minor: 27 }, sidecarGate: false },
        },
      },
      class: 'untouched',
      reason: 'run-to-completion',
    },
    {
      name: 'Pod Security baseline refuses the init container',
      pod: pod(APP),
      context: {
        options: {
          ...OPTIONS,
          podSecurity: { state: 'known', policy: { level: 'baseline', version: 'latest', source: 'label' } },
        },
      },
      class: 'untouched',
      reason: 'pod-security',
    },
    {
      name: 'a LimitRange that leaves our containers no room',
      pod: pod(APP),
      context: {
        options: {
          ...OPTIONS,
          namespaceRules: {
            state: 'known',
            namespace: 'shop',
            limitRanges: [
              {
                metadata: { name: 'tiny' },
                spec: { limits: [{ type: 'Container', max: { memory: '8Mi' } }] },
              },
            ],
            resourceQuotas: [],
          },
        },
      },
      class: 'untouched',
      reason: 'admission-rules',
    },
    {
      name: 'an annotation the webhook cannot read',
      pod: pod(APP, { 'osm-healthcheck/rewrite-probes': 'maybe' }),
      class: 'untouched',
      reason: 'invalid',
    },
  ])('$name: $class $reason', ({ pod: p, context = {}, class: expected, reason }) => {
    const found = classifyPod(p, { ...CONTEXT, ...context });
    expect(found).toMatchObject({ class: expected, ...(reason === undefined ? {} : { reason }) });
    if (found.class === 'untouched') expect(UNTOUCHED_REASONS).toContain(found.reason);
  });
});

describe('needsAction', () => {
  it.each([
    { found: { class: 'covered', detail: '' }, action: false },
    { found: { class: 'stale', detail: '' }, action: true },
    { found: { class: 'uncovered', detail: '' }, action: true },
    { found: { class: 'failing', detail: '' }, action: true },
    { found: { class: 'untouched', reason: 'opted-out', detail: '' }, action: false },
    { found: { class: 'untouched', reason: 'invalid', detail: '' }, action: true },
  ] as const)('$found.class $found.reason: $action', ({ found, action }) => {
    expect(needsAction(found)).toBe(action);
  });
});
