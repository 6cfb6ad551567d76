// Our image as osm-edge's and OSM's own healthcheck container, end to end. The pods are test/fixtures/osm-edge/
// shop.osm-edge.yaml and shop.osm.yaml, what osm-edge v1.3.9's and OSM v1.2.4's injectors write of shop.yaml
// (cited there): osm-init's iptables rules, the app's probes rewritten to the sidecar (15902 readiness over HTTP,
// 15903 startup over HTTPS, which osm-edge turns into a TCP check through ours) and to their `osm-healthcheck`
// container (15904 liveness, a TCP probe), that container (command /osm-healthcheck, args --verbosity info, image
// ours) and the sidecar (Pipy, Envoy). Played in network namespaces (osm-edge-pod.ts) while the app goes healthy
// -> unhealthy -> dead -> healthy: kubelet's decisions must be the true ones, reached through the sidecar for
// HTTP and through ours on 15904 for TCP, and ours must listen on 15904 alone beside the sidecar on 15901-15903.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { PodSpec } from '../../src/rewrite/types.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { LAB_READY, warnUnlessRoot } from '../init/lab.js';
import { osmEdgeInject } from '../rewrite/osm-edge-injector.js';
import { type Bundle, bundle } from './bundle.js';
import { playOsmEdgePod } from './osm-edge-pod.js';
import { type Phase, PLAYED_TICK_MS } from './pod.js';
import { readPodSpec } from './pod-spec.js';
import { osmEnvoyProbes, pipyProbes } from './sidecar-standin.js';

warnUnlessRoot(
  "test/e2e/osm-edge-pod.test.ts (osm-edge's pod with our healthcheck container, in network namespaces)",
);

const FIXTURES = fileURLToPath(new URL('../fixtures/osm-edge/', import.meta.url));
const ORIGINAL = readFileSync(`${FIXTURES}shop.yaml`, 'utf8');
const INJECTED = readFileSync(`${FIXTURES}shop.osm-edge.yaml`, 'utf8');
const OSM_INJECTED = readFileSync(`${FIXTURES}shop.osm.yaml`, 'utf8');
/** The image osm-edge's injector was given for its healthcheck container (OSM_DEFAULT_HEALTHCHECK_CONTAINER_IMAGE). */
const IMAGE = 'osm-healthcheck:0.1.0';
const PHASES: readonly Phase[] = ['healthy', 'unhealthy', 'dead', 'healthy'];
const TICK_MS = PLAYED_TICK_MS;
const PHASE_TICKS = 20;

const specOf = (text: string) => (parse(text) as { spec: PodSpec }).spec;

describe("the osm-edge fixture is what osm-edge's injector writes", () => {
  it("the app's probes are osm-edge's rewrite of shop.yaml's (pkg/injector/health_probes.go)", () => {
    const [app] = osmEdgeInject(specOf(ORIGINAL)).containers ?? [];
    const [fixture] = specOf(INJECTED).containers ?? [];
    expect(fixture?.livenessProbe).toEqual(app?.livenessProbe);
    expect(fixture?.readinessProbe).toEqual(app?.readinessProbe);
    expect(fixture?.startupProbe).toEqual(app?.startupProbe);
  });

  it.each([
    { name: "osm-edge's sidecar.go", manifest: INJECTED, sidecar: 'sidecar' },
    { name: "OSM's patch.go", manifest: OSM_INJECTED, sidecar: 'envoy' },
  ])(
    'its healthcheck container is the one $name adds, with our image, before the sidecar',
    ({ manifest, sidecar }) => {
      const containers = specOf(manifest).containers ?? [];
      expect(containers.map((c) => c.name)).toEqual(['shop', 'osm-healthcheck', sidecar]);
      expect(containers[1]).toEqual({
        name: 'osm-healthcheck',
        image: IMAGE,
        imagePullPolicy: 'IfNotPresent',
        command: ['/osm-healthcheck'],
        args: ['--verbosity', 'info'],
        ports: [{ containerPort: 15904 }],
      });
    },
  );

  it("the sidecar stand-in serves what Pipy's probes.js makes of those probes", () => {
    expect(pipyProbes(readPodSpec(INJECTED).containers)).toEqual([
      // The HTTP readiness probe: to the app, its path from Original-Http-Path.
      {
        kind: 'readiness',
        port: 15902,
        mode: 'http',
        target: { host: '127.0.0.1', port: 8080 },
        path: '/ready',
      },
      // The HTTPS startup probe, now Original-Tcp-Port: the bytes go to the healthcheck container.
      { kind: 'startup', port: 15903, mode: 'tcp', target: { host: '127.0.0.1', port: 15904 }, path: '/' },
    ]);
  });

  it("the Envoy stand-in serves what OSM's bootstrap makes of shop.yaml's probes (none for the TCP one)", () => {
    expect(osmEnvoyProbes(readPodSpec(ORIGINAL).containers)).toEqual([
      {
        kind: 'readiness',
        port: 15902,
        mode: 'http',
        target: { host: '127.0.0.1', port: 8080 },
        path: '/ready',
      },
      // HTTPS: a TCP proxy to the app's port; kubelet speaks TLS end to end.
      { kind: 'startup', port: 15903, mode: 'tcp', target: { host: '127.0.0.1', port: 8443 }, path: '/' },
    ]);
  });
});

const MESHES = [
  {
    name: 'osm-edge v1.3.9 (Pipy)',
    tag: 'osmedge',
    manifest: INJECTED,
    sidecar: { name: 'sidecar', probes: pipyProbes(readPodSpec(INJECTED).containers) },
  },
  {
    name: 'OSM v1.2.4 (Envoy)',
    tag: 'osm',
    manifest: OSM_INJECTED,
    sidecar: { name: 'envoy', probes: osmEnvoyProbes(readPodSpec(ORIGINAL).containers) },
  },
];

describe.skipIf(!LAB_READY)("osm-edge's pod, our image as its healthcheck container", () => {
  let programs: { app: Bundle; prober: Bundle };
  let cert: TestCert;

  beforeAll(async () => {
    const [app, prober] = await Promise.all([
      bundle(new URL('./app.ts', import.meta.url)),
      bundle(new URL('./node-prober.ts', import.meta.url)),
    ]);
    programs = { app, prober };
    cert = makeTestCert();
  });
  afterAll(() => {
    programs?.app.remove();
    programs?.prober.remove();
    cert?.cleanup();
  });

  it.each(MESHES)(
    '$name: kubelet decides truly, HTTP through the sidecar, TCP through ours on 15904 alone',
    async ({ tag, manifest, sidecar }) => {
      const result = await playOsmEdgePod({
        manifest,
        original: ORIGINAL,
        image: IMAGE,
        sidecar,
        tag,
        phases: PHASES,
        tickMs: TICK_MS,
        phaseTicks: PHASE_TICKS,
        programs: { app: programs.app.path, prober: programs.prober.path },
        tls: { key: cert.key, cert: cert.cert },
      });
      // Ours bound 15904 alone, before the sidecar bound 15901-15903 (it started after ours listened).
      expect(result.ourPorts, result.transcript).toEqual({ healthcheck: 15904 });
      expect(result.table, result.transcript).toEqual({
        // Unhealthy: /ready answers 503 through the sidecar, so not ready; the TCP liveness probe, through ours,
        // still connects. Dead: it cannot, and liveness restarts the app; the HTTPS startup probe then holds the
        // new container back until the app listens again.
        shop: ['ready', 'not ready', 'not ready, restarted by liveness', 'ready'],
        'osm-healthcheck': ['ready', 'ready', 'ready', 'ready'],
        [sidecar.name]: ['ready', 'ready', 'ready', 'ready'],
      });
    },
    60_000,
  );
});
