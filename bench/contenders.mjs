// What the benchmark starts on the server core: the floor (bench/floor.mjs) and the companion, each with V8's
// heap as on this machine and as in a pod with a 128 MiB memory limit. Each launch times spawn -> all ports answer.

import { freePorts, SERVER_CORE, spawnNode, waitAnswering } from './procs.mjs';

/** The CLI under test: the repo's own build unless BENCH_CLI names another (e.g. a build of an older commit). */
export const CLI = process.env.BENCH_CLI ?? 'dist/cli.mjs';

/**
 * V8 heap flags that reproduce what Node itself configures inside a container with a 128 MiB memory limit: Node
 * sizes V8 from the cgroup limit (src/api/environment.cc, nodejs/node#27508) and V8 derives an old generation of
 * limit / 4 × 2 = 64 MiB and, below 256 MiB of old generation, semi-spaces of old / 256 clamped to the 1 MiB
 * minimum (Heap::HeapSizeFromPhysicalMemory). The flags stand in for a cgroup this bench cannot create; start-up is
 * taken from the plain runs, since any heap flag also costs start-up time a cgroup limit does not (BENCHMARKS.md).
 */
export const HEAP_128MI = ['--max-semi-space-size=1', '--max-old-space-size=64'];

/**
 * `app`: ports of bench/app.mjs; `refused`: a port nothing listens on. The companion's table names both TCP
 * ports (a table restricts /osm-healthcheck to its own ports) and an HTTP liveness probe: a typical pod.
 */
export function contenders(app, refused) {
  const table = JSON.stringify({
    liveness: { app: { httpGet: { port: app.http, path: '/live' } } },
    readiness: { app: { tcpSocket: { port: app.tcp } }, db: { tcpSocket: { port: refused } } },
  });
  const floor = (name, flags) => ({
    name,
    portCount: 1,
    args: (ports) => [...flags, 'bench/floor.mjs', String(ports[0])],
    env: {},
  });
  return [
    floor('floor', []),
    companion('companion', [], table),
    companion('companion@128Mi', HEAP_128MI, table),
    floor('floor@128Mi', HEAP_128MI),
  ];
}

function companion(name, flags, table) {
  return {
    name,
    portCount: 4,
    args: (ports) => [...flags, CLI, 'serve', '--ports', ports.join(','), '--host', '127.0.0.1'],
    env: { OSM_HEALTHCHECK_PROBES: table },
  };
}

/** The companion for probe overhead and fairness, heap as in a 128 MiB container, with a gRPC startup probe too. */
export function probeCompanion(app) {
  const table = JSON.stringify({
    liveness: { app: { httpGet: { port: app.http, path: '/live' } } },
    readiness: { app: { tcpSocket: { port: app.tcp } } },
    startup: { app: { grpc: { port: app.grpc } } },
  });
  return companion('companion@128Mi (gRPC table)', HEAP_128MI, table);
}

/** The floor for probe overhead: the same TCP check, one port. */
export function probeFloor() {
  return { name: 'floor', portCount: 1, args: (ports) => ['bench/floor.mjs', String(ports[0])], env: {} };
}

/** Spawns a contender on the server core; resolves once all its ports answer. The last port takes /osm-healthcheck. */
export async function launch(contender) {
  const ports = await freePorts(contender.portCount);
  const started = performance.now();
  const child = spawnNode(SERVER_CORE, contender.args(ports), contender.env);
  await waitAnswering(ports, child);
  return { child, ports, startupMs: performance.now() - started, healthcheck: ports.at(-1) };
}
