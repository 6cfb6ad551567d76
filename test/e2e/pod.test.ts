// A whole pod, end to end: an example Deployment goes through the built CLI's `inject`; its init container, apps
// and companion run as processes in a pod network namespace behind osm-edge's interception, started in the pod
// spec's order with each postStart hook run to its end first, as kubelet does; a kubelet stand-in in a node
// namespace runs the rewritten probes with kubelet's rules from each container's start while the apps go healthy
// -> unhealthy -> dead -> healthy. The companion must answer by the apps' first probes (not one probe fails
// before Ready, so even failureThreshold 1 would restart nothing), the decisions must be kubelet's right ones,
// and the same pod without inject and init must get them wrong, as a meshed pod does: TCP probes pass through
// the proxy, HTTP and gRPC probes fail. IPv4 and IPv6.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { backendWorks, LAB_READY, warnUnlessRoot } from '../init/lab.js';
import { type Bundle, bundle } from './bundle.js';
import { type Family, type Phase, PLAYED_TICK_MS, playPod } from './pod.js';

warnUnlessRoot('test/e2e/pod.test.ts (a whole pod in network namespaces)');

const FIXTURES = fileURLToPath(new URL('../fixtures/e2e/', import.meta.url));
/** The image inject writes; containers of it are played by the built CLI. */
const IMAGE = 'osm-healthcheck:e2e';
const PHASES: readonly Phase[] = ['healthy', 'unhealthy', 'dead', 'healthy'];
/** One kubelet second is 100 ms; each phase lasts 20 of them, at least twice what its decisions take. */
const TICK_MS = PLAYED_TICK_MS;
const PHASE_TICKS = 20;

const READY = 'ready';
const every = (verdict: string) => PHASES.map(() => verdict);

// The decision table: per container, what kubelet decides by the end of each phase.
const VARIANTS = [
  {
    name: 'shop: liveness httpGet with a header, readiness tcpSocket, startup grpc',
    tag: 'shop',
    fixture: 'shop.yaml',
    injected: {
      // Unhealthy: /live fails, so liveness restarts it; the new container's startup probe then meets
      // NOT_SERVING, fails too, and readiness waits behind it although the TCP port still accepts.
      shop: [READY, 'not ready, restarted by liveness and startup', 'not ready, restarted by startup', READY],
      'osm-healthcheck': every(READY),
    },
    // The gRPC startup probe hits the proxy and fails: the app never starts, whatever its health.
    baseline: { shop: every('not ready, restarted by startup') },
  },
  {
    // Pod Security "baseline" refuses our init container: osm-edge's own annotation lets kubelet through to the
    // companion, and the companion's probes of the app at the pod IP pass osm-edge's outbound rules (`-o lo`
    // RETURN for every user but the proxy's) without our OUTPUT rule.
    name: 'shop without our init container: --pod-security baseline --mesh-exclusion osm',
    tag: 'shopx',
    fixture: 'shop.yaml',
    args: ['--pod-security', 'baseline', '--mesh-exclusion', 'osm'],
    injected: {
      shop: [READY, 'not ready, restarted by liveness and startup', 'not ready, restarted by startup', READY],
      'osm-healthcheck': every(READY),
    },
    baseline: { shop: every('not ready, restarted by startup') },
  },
  {
    name: 'secure: liveness and readiness over HTTPS, no startup probe',
    tag: 'sec',
    fixture: 'secure.yaml',
    injected: {
      secure: [READY, 'not ready, restarted by liveness', 'not ready, restarted by liveness', READY],
      'osm-healthcheck': every(READY),
    },
    // TLS to the proxy fails: restarted forever, never ready.
    baseline: { secure: every('not ready, restarted by liveness') },
  },
  {
    name: 'pair: an HTTP web container and a TCP-only cache, judged one by one',
    tag: 'pair',
    fixture: 'pair.yaml',
    injected: {
      web: [READY, 'not ready, restarted by liveness', 'not ready, restarted by liveness', READY],
      // A TCP probe can't see "unhealthy", only dead.
      cache: [READY, READY, 'not ready, restarted by liveness', READY],
      'osm-healthcheck': every(READY),
    },
    // HTTP always fails through the proxy; TCP always passes, even with the cache dead.
    baseline: { web: every('not ready, restarted by liveness'), cache: every(READY) },
  },
];

const FAMILIES: { name: string; family: Family }[] = [
  { name: 'IPv4', family: 'v4' },
  { name: 'IPv6', family: 'v6' },
];

describe.skipIf(!LAB_READY)('a whole pod, end to end', () => {
  let programs: { app: Bundle; prober: Bundle };
  let cert: TestCert;
  let backend: 'nft' | 'legacy';

  beforeAll(async () => {
    backend = (await backendWorks('nft')) ? 'nft' : 'legacy';
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

  describe.each(FAMILIES)('$name', ({ family }) => {
    it.each(VARIANTS)(
      '$name',
      async ({ tag, fixture, injected, baseline, ...variant }) => {
        const original = readFileSync(`${FIXTURES}${fixture}`, 'utf8');
        const args = 'args' in variant ? (variant.args ?? []) : [];
        const inject = await runCli(['inject', '-f', `${FIXTURES}${fixture}`, '--image', IMAGE, ...args]);
        expect(inject.code, inject.stderr).toBe(0);
        // The variant without our init container must be played without it.
        expect(inject.stdout.includes('osm-healthcheck-init')).toBe(!args.includes('--mesh-exclusion'));
        const common = {
          original,
          image: IMAGE,
          family,
          backend,
          phases: PHASES,
          tickMs: TICK_MS,
          phaseTicks: PHASE_TICKS,
          programs: { app: programs.app.path, prober: programs.prober.path },
          tls: { key: cert.key, cert: cert.cert },
        };
        // Both pods run to the end, and clean up, even when one fails.
        const [withInject, without] = (
          await Promise.allSettled([
            playPod({ ...common, manifest: inject.stdout, tag: `${tag}-${family}-i` }),
            playPod({ ...common, manifest: original, tag: `${tag}-${family}-b` }),
          ])
        ).map((settled) => {
          if (settled.status === 'rejected') throw settled.reason;
          return settled.value;
        });
        if (withInject === undefined || without === undefined) throw new Error('a pod did not play');
        const apps = Object.keys(baseline);
        // The companion first, its postStart hook (osm-healthcheck wait) done before any app starts.
        expect(withInject.startup, withInject.transcript).toEqual([
          'start osm-healthcheck',
          'postStart osm-healthcheck: exit 0',
          ...apps.map((app) => `start ${app}`),
        ]);
        expect(withInject.failuresBeforeReady, withInject.transcript).toEqual({});
        expect(withInject.table, withInject.transcript).toEqual(injected);
        expect(without.table, without.transcript).toEqual(baseline);
      },
      60_000,
    );
  });
});
