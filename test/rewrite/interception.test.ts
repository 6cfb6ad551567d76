// How probes get past the mesh, per pod: the Pod Security level read as the PodSecurity plugin reads it, each
// mesh's exclusion list parsed as that mesh parses it, and the decision over every combination.

import { describe, expect, it } from 'vitest';
import { decideInterception } from '../../src/rewrite/interception.js';
import {
  excludingMesh,
  exclusionAnnotation,
  type Mesh,
  parseExclusionList,
} from '../../src/rewrite/mesh-exclusion.js';
import { enforcedPolicy, type PodSecurityKnowledge } from '../../src/rewrite/pod-security.js';

describe('parseExclusionList: each mesh reads its list its own way', () => {
  it.each<{ mesh: Mesh; value: string; want: Array<[number, number]> | undefined }>([
    {
      mesh: 'osm',
      value: '15901,15902, 15903 ,15904',
      want: [
        [15901, 15901],
        [15902, 15902],
        [15903, 15903],
        [15904, 15904],
      ],
    },
    { mesh: 'osm', value: '0', want: undefined }, // Atoi, then > 0
    { mesh: 'osm', value: '15901-15904', want: undefined }, // no ranges in OSM
    { mesh: 'osm', value: '15901,', want: undefined }, // "" is no port
    {
      mesh: 'istio',
      value: '0,65535',
      want: [
        [0, 0],
        [65535, 65535],
      ],
    },
    { mesh: 'istio', value: '65536', want: undefined },
    { mesh: 'istio', value: '15901-15904', want: undefined },
    { mesh: 'kuma', value: '15901-15904', want: undefined },
    { mesh: 'kuma', value: '8080', want: [[8080, 8080]] },
    { mesh: 'linkerd', value: '15901-15904', want: [[15901, 15904]] },
    {
      mesh: 'linkerd',
      value: '25, 15900-15905,',
      want: [
        [25, 25],
        [15900, 15905],
      ],
    },
    { mesh: 'linkerd', value: '15904-15901', want: undefined },
    { mesh: 'linkerd', value: '1-2-3', want: undefined },
    { mesh: 'linkerd', value: 'http', want: undefined },
  ])('$mesh "$value"', ({ mesh, value, want }) => {
    const got = parseExclusionList(mesh, value);
    expect(got?.map(({ first, last }) => [first, last])).toEqual(want);
  });
});

describe('excludingMesh: an annotation that covers all of 15901-15904', () => {
  it.each<{ name: string; annotations: Record<string, string>; want: string | undefined }>([
    { name: 'none', annotations: {}, want: undefined },
    {
      name: 'Istio, all four',
      annotations: { 'traffic.sidecar.istio.io/excludeInboundPorts': '15901,15902,15903,15904' },
      want: 'istio',
    },
    {
      name: 'Istio, three',
      annotations: { 'traffic.sidecar.istio.io/excludeInboundPorts': '15901,15902,15903' },
      want: undefined,
    },
    {
      name: 'Linkerd range',
      annotations: { 'config.linkerd.io/skip-inbound-ports': '15000-16000' },
      want: 'linkerd',
    },
    {
      name: 'Istio with a range it refuses',
      annotations: { 'traffic.sidecar.istio.io/excludeInboundPorts': '15901-15904' },
      want: undefined,
    },
    {
      name: 'osm-edge',
      annotations: { 'openservicemesh.io/inbound-port-exclusion-list': '8080,15901,15902,15903,15904' },
      want: 'osm',
    },
    {
      name: 'Kuma',
      annotations: { 'traffic.kuma.io/exclude-inbound-ports': '15904,15903,15902,15901' },
      want: 'kuma',
    },
  ])('$name', ({ annotations, want }) => {
    expect(excludingMesh(annotations)?.mesh).toBe(want);
  });
});

describe("exclusionAnnotation: the pod's own list, completed", () => {
  it.each<{ name: string; mesh: Mesh; annotations: Record<string, string>; want: unknown }>([
    {
      name: 'none yet',
      mesh: 'istio',
      annotations: {},
      want: { set: { 'traffic.sidecar.istio.io/excludeInboundPorts': '15901,15902,15903,15904' } },
    },
    {
      name: 'empty',
      mesh: 'kuma',
      annotations: { 'traffic.kuma.io/exclude-inbound-ports': ' ' },
      want: { set: { 'traffic.kuma.io/exclude-inbound-ports': '15901,15902,15903,15904' } },
    },
    {
      name: 'some already',
      mesh: 'osm',
      annotations: { 'openservicemesh.io/inbound-port-exclusion-list': '15902,9000' },
      want: { set: { 'openservicemesh.io/inbound-port-exclusion-list': '15902,9000,15901,15903,15904' } },
    },
    {
      name: 'all already',
      mesh: 'linkerd',
      annotations: { 'config.linkerd.io/skip-inbound-ports': '15901-15904' },
      want: { set: {} },
    },
    {
      name: 'a list the mesh refuses',
      mesh: 'istio',
      annotations: { 'traffic.sidecar.istio.io/excludeInboundPorts': '80-90' },
      want: { invalid: '"80-90" is no list Istio accepts' },
    },
  ])('$name', ({ mesh, annotations, want }) => {
    expect(exclusionAnnotation(mesh, annotations)).toEqual(want);
  });
});

describe('enforcedPolicy: api.PolicyToEvaluate for enforce', () => {
  it.each<{
    name: string;
    labels: Record<string, string> | undefined;
    def: 'privileged' | 'baseline' | 'restricted';
    want: string[];
  }>([
    {
      name: 'no labels: the default',
      labels: undefined,
      def: 'privileged' as const,
      want: ['privileged', 'latest'],
    },
    {
      name: 'no labels, default baseline',
      labels: {},
      def: 'baseline' as const,
      want: ['baseline', 'latest'],
    },
    {
      name: 'baseline at v1.28',
      labels: {
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/enforce-version': 'v1.28',
      },
      def: 'privileged' as const,
      want: ['baseline', 'v1.28'],
    },
    {
      name: 'an invalid level is restricted',
      labels: { 'pod-security.kubernetes.io/enforce': 'Baseline' },
      def: 'privileged' as const,
      want: ['restricted', 'latest'],
    },
    {
      name: 'an invalid version is latest',
      labels: {
        'pod-security.kubernetes.io/enforce': 'privileged',
        'pod-security.kubernetes.io/enforce-version': '1.28',
      },
      def: 'baseline' as const,
      want: ['privileged', 'latest'],
    },
    {
      name: 'only a version: the default level',
      labels: { 'pod-security.kubernetes.io/enforce-version': 'v1.30' },
      def: 'restricted' as const,
      want: ['restricted', 'v1.30'],
    },
  ])('$name', ({ labels, def, want }) => {
    const { level, version } = enforcedPolicy(labels, def, 'ns');
    expect([level, version]).toEqual(want);
  });
});

describe('decideInterception', () => {
  const at = (level: 'privileged' | 'baseline' | 'restricted'): PodSecurityKnowledge => ({
    state: 'known',
    policy: { level, version: 'latest', source: 'namespace "ns"' },
  });
  const istio = { 'traffic.sidecar.istio.io/excludeInboundPorts': '15901,15902,15903,15904' };
  it.each([
    {
      name: 'unchecked: init container',
      podSecurity: { state: 'unchecked' } as const,
      annotations: {},
      want: 'init-container',
    },
    {
      name: 'privileged: init container',
      podSecurity: at('privileged'),
      annotations: {},
      want: 'init-container',
    },
    { name: 'baseline: untouched', podSecurity: at('baseline'), annotations: {}, want: 'none' },
    { name: 'restricted: untouched', podSecurity: at('restricted'), annotations: {}, want: 'none' },
    {
      name: 'baseline, mesh annotation: the mesh',
      podSecurity: at('baseline'),
      annotations: istio,
      want: 'mesh',
    },
    {
      name: 'privileged, mesh annotation: the mesh (the init container adds nothing)',
      podSecurity: at('privileged'),
      annotations: istio,
      want: 'mesh',
    },
    {
      name: 'unknown namespace: untouched',
      podSecurity: { state: 'unknown', namespace: 'new', why: 'not seen yet' } as const,
      annotations: {},
      want: 'none',
    },
    {
      name: 'unknown namespace, mesh annotation: the mesh',
      podSecurity: { state: 'unknown', namespace: 'new', why: 'x' } as const,
      annotations: istio,
      want: 'mesh',
    },
  ])('$name', ({ podSecurity, annotations, want }) => {
    expect(decideInterception({ podSecurity, meshExclusion: undefined, annotations }).bypass).toBe(want);
  });

  it('says why and what to do, in one line that fits a warning', () => {
    const decided = decideInterception({
      podSecurity: at('restricted'),
      meshExclusion: undefined,
      annotations: {},
    });
    expect(decided).toEqual({
      bypass: 'none',
      reason: `left untouched: Pod Security "restricted:latest" (namespace "ns") refuses our init container's NET_ADMIN, NET_RAW; list 15901-15904 in the mesh's exclusion annotation (inject --mesh-exclusion; docs/pod-security.md)`,
    });
    const unknown = decideInterception({
      podSecurity: {
        state: 'unknown',
        namespace: 'fresh',
        why: 'namespace not seen yet: created after the last watch event',
      },
      meshExclusion: undefined,
      annotations: {},
    });
    expect(unknown.bypass === 'none' && unknown.reason).toBe(
      `left untouched: the Pod Security level of namespace "fresh" is not known (namespace not seen yet: created after the last …), and it may refuse our init container; or list 15901-15904 in the mesh's exclusion annotation (inject --mesh-exclusion; docs/pod-security.md)`,
    );
  });

  it('--mesh-exclusion wins over the level, and reports a list the mesh refuses', () => {
    expect(
      decideInterception({ podSecurity: at('privileged'), meshExclusion: 'kuma', annotations: {} }),
    ).toEqual({
      bypass: 'mesh',
      mesh: 'kuma',
      annotation: 'traffic.kuma.io/exclude-inbound-ports',
      set: { 'traffic.kuma.io/exclude-inbound-ports': '15901,15902,15903,15904' },
    });
    expect(
      decideInterception({
        podSecurity: at('baseline'),
        meshExclusion: 'osm',
        annotations: { 'openservicemesh.io/inbound-port-exclusion-list': 'x' },
      }).bypass,
    ).toBe('invalid');
  });
});
