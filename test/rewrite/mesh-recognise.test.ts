// Mesh recognition and what follows from it, on pods of our own modelled on each injector (the source each rule
// mirrors is cited in src/rewrite/mesh/recognise.ts): which mesh, its containers, its own prober; the mesh
// exclusion annotation counted only where the mesh's init step (or CNI) still reads it; Kuma's list as Kuma reads it.

import { describe, expect, it } from 'vitest';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME } from '../../src/rewrite/companion.js';
import { decideInterception } from '../../src/rewrite/interception.js';
import { recogniseMesh } from '../../src/rewrite/mesh/recognise.js';
import { parseExclusionList } from '../../src/rewrite/mesh-exclusion.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import type { Container, PodSpec } from '../../src/rewrite/types.js';

const app: Container = {
  name: 'app',
  ports: [{ containerPort: 8080 }],
  livenessProbe: { httpGet: { path: '/live', port: 8080 } },
  readinessProbe: { tcpSocket: { port: 8080 } },
};

/** istio-init with `-d` as inject.go writes it (istio-iptables), istio-proxy probed on 15021. */
function istioPod(excluded = '15090,15021,15020'): PodSpec {
  return {
    initContainers: [{ name: 'istio-init', args: ['istio-iptables', '-p', '15001', '-d', excluded] }],
    containers: [
      app,
      { name: 'istio-proxy', readinessProbe: { httpGet: { path: '/healthz/ready', port: 15021 } } },
    ],
  };
}

const linkerdPod = (ignored = '4190,4191'): PodSpec => ({
  initContainers: [{ name: 'linkerd-init', args: ['--inbound-ports-to-ignore', ignored] }],
  containers: [app, { name: 'linkerd-proxy', livenessProbe: { httpGet: { path: '/live', port: 4191 } } }],
});

describe('recogniseMesh', () => {
  it.each<{ name: string; spec: PodSpec; annotations?: Record<string, string>; mesh: string | undefined }>([
    { name: 'a plain pod', spec: { containers: [app] }, mesh: undefined },
    { name: 'Istio (istio-proxy)', spec: istioPod(), mesh: 'istio' },
    { name: 'Linkerd (linkerd-proxy)', spec: linkerdPod(), mesh: 'linkerd' },
    {
      name: 'Kuma (kuma.io/sidecar-injected)',
      spec: { containers: [app] },
      annotations: { 'kuma.io/sidecar-injected': 'true' },
      mesh: 'kuma',
    },
    {
      name: 'Consul (connect-inject-status)',
      spec: { containers: [app] },
      annotations: { 'consul.hashicorp.com/connect-inject-status': 'injected' },
      mesh: 'consul',
    },
    {
      name: 'osm-edge (osm-init)',
      spec: { initContainers: [{ name: 'osm-init' }], containers: [app] },
      mesh: 'osm',
    },
    {
      name: "OSM's healthcheck container (command /osm-healthcheck)",
      spec: { containers: [app, { name: 'osm-healthcheck', command: ['/osm-healthcheck'] }] },
      mesh: 'osm',
    },
  ])('$name', ({ spec, annotations, mesh }) => {
    expect(recogniseMesh(spec, annotations, false)?.mesh).toBe(mesh);
  });

  it.each([
    { path: '/app-health/app/livez', port: 15020, answered: true },
    { path: '/live', port: 15020, answered: false },
    { path: '/app-health/app/livez', port: 8080, answered: false },
  ])("Istio's pilot-agent answers $path on $port: $answered", ({ path, port, answered }) => {
    const mesh = recogniseMesh(istioPod(), undefined, false);
    expect(mesh?.prober({ httpGet: { path, port } }) !== undefined).toBe(answered);
  });

  it("Kuma's probe proxy: the port of kuma.io/application-probe-proxy-port, none when it is 0", () => {
    const on = recogniseMesh(
      { containers: [app] },
      { 'kuma.io/sidecar-injected': 'true', 'kuma.io/application-probe-proxy-port': '9001' },
      false,
    );
    expect(on?.prober({ httpGet: { path: '/8080/live', port: 9001 } })).toMatch(/9001/);
    const off = recogniseMesh(
      { containers: [app] },
      { 'kuma.io/sidecar-injected': 'true', 'kuma.io/application-probe-proxy-port': '0' },
      false,
    );
    expect(off?.prober({ httpGet: { path: '/8080/live', port: 9000 } })).toBeUndefined();
  });
});

describe('the mesh exclusion annotation on a pod the mesh injected: what its init step was given counts', () => {
  const unchecked = { state: 'unchecked' } as const;
  it.each<{
    name: string;
    spec: PodSpec;
    annotations?: Record<string, string>;
    flag?: 'istio' | 'linkerd' | 'kuma';
    bypass: string;
  }>([
    {
      name: "Istio's annotation lists 15901-15904 but istio-init's -d does not: our init container stays",
      spec: istioPod(),
      annotations: { 'traffic.sidecar.istio.io/excludeInboundPorts': '15901,15902,15903,15904' },
      bypass: 'init-container',
    },
    {
      name: "istio-init's -d lists 15901-15904: no init container",
      spec: istioPod('15020,15901,15902,15903,15904'),
      bypass: 'mesh',
    },
    {
      name: '--mesh-exclusion istio on an Istio pod with istio-init: our init container stays',
      spec: istioPod(),
      flag: 'istio',
      bypass: 'init-container',
    },
    {
      name: '--mesh-exclusion linkerd on an Istio pod: our init container stays',
      spec: istioPod(),
      flag: 'linkerd',
      bypass: 'init-container',
    },
    {
      name: 'Istio with its CNI (istio-validation, no istio-init): the annotation is read as the pod starts',
      spec: { initContainers: [{ name: 'istio-validation' }], containers: [app, { name: 'istio-proxy' }] },
      flag: 'istio',
      bypass: 'mesh',
    },
    {
      name: "linkerd-init's --inbound-ports-to-ignore covers 15901-15904",
      spec: linkerdPod('4190,4191,15901-15904'),
      bypass: 'mesh',
    },
    {
      name: "a Linkerd pod with OSM's annotation: no mesh's concern, our init container stays",
      spec: linkerdPod(),
      annotations: { 'openservicemesh.io/inbound-port-exclusion-list': '15901,15902,15903,15904' },
      bypass: 'init-container',
    },
  ])('$name', ({ spec, annotations, flag, bypass }) => {
    const injected = recogniseMesh(spec, annotations, false);
    const decided = decideInterception({
      podSecurity: unchecked,
      meshExclusion: flag,
      annotations,
      injected,
    });
    expect(decided.bypass).toBe(bypass);
    if (flag !== undefined && bypass === 'init-container') {
      expect((decided as { note?: string }).note).toMatch(
        `--mesh-exclusion ${flag} does not take effect on this pod`,
      );
    }
  });

  it("Kuma's list takes a trailing comma, as Kuma's parser does", () => {
    expect(parseExclusionList('kuma', '15901,15902,15903,15904,')).toHaveLength(4);
  });
});

describe('rewritePodSpec on our models of each mesh', () => {
  const rewrite = (spec: PodSpec, annotations?: Record<string, string>) =>
    rewritePodSpec(spec, annotations, { image: DEFAULT_IMAGE, placement: 'first' }, 'Pod/test');

  it("Linkerd: the app's probes ours (a TCP probe would meet linkerd-proxy), linkerd-proxy's untouched, our init container kept", () => {
    const spec = linkerdPod();
    const result = rewrite(spec);
    const names = [...(result.spec.initContainers ?? []), ...(result.spec.containers ?? [])].map(
      (c) => c.name,
    );
    expect(names).toEqual([INIT_NAME, 'linkerd-init', COMPANION_NAME, 'app', 'linkerd-proxy']);
    expect(result.spec.containers?.find((c) => c.name === 'linkerd-proxy')).toEqual(spec.containers?.[1]);
    expect(result.spec.containers?.find((c) => c.name === 'app')?.readinessProbe?.httpGet?.port).toBe(15904);
  });

  it("a pod whose only probes are the proxy's gets nothing", () => {
    const spec: PodSpec = {
      ...linkerdPod(),
      containers: [{ name: 'app' }, linkerdPod().containers?.[1] as Container],
    };
    expect(rewrite(spec).changed).toBe(false);
  });

  it("Istio's rewrite on: the probes stay with pilot-agent, with a note naming the setting", () => {
    const spec: PodSpec = {
      ...istioPod(),
      containers: [
        { name: 'app', livenessProbe: { httpGet: { path: '/app-health/app/livez', port: 15020 } } },
        istioPod().containers?.[1] as Container,
      ],
    };
    const result = rewrite(spec);
    expect(result.changed).toBe(false);
    expect(result.warnings).toEqual([
      `Pod/test: Istio's own prober answers "app" liveness: left as Istio wrote them. For the companion instead: sidecar.istio.io/rewriteAppHTTPProbers: "false" before Istio injects (docs/meshes.md)`,
    ]);
  });
});

describe('our names and ports, only where our containers would be added', () => {
  it('a pod with no probe for the companion keeps its own osm-healthcheck container and port 15902, untouched', () => {
    const spec: PodSpec = {
      containers: [
        { name: 'app', ports: [{ containerPort: 15902 }] },
        { name: 'osm-healthcheck', image: 'mine:1' },
      ],
    };
    const result = rewritePodSpec(spec, undefined, { image: DEFAULT_IMAGE, placement: 'first' }, 'Pod/test');
    expect(result.changed).toBe(false);
    expect(result.spec).toEqual(spec);
  });
});
