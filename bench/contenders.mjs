// What the benchmark starts on the server core: the floor (bench/floor.mjs) and the companion, each with V8's
// heap as on this machine and as in a pod with a 128 MiB memory limit. Each launch times spawn -> all ports answer.

import { HEAP_FLAGS_128MI, podCgroup } from './cgroup.mjs';
import { freePorts, SERVER_CORE, spawnNode, waitAnswering } from './procs.mjs';

/** The CLI under test: the repo's own build unless BENCH_CLI names another (e.g. a build of an older commit). */
export const CLI = process.env.BENCH_CLI ?? 'dist/cli.mjs';

/**
 * How the `@128Mi` servers get the heap of a pod with a 128 MiB memory limit: a real memory cgroup of 128 MiB where
 * the bench can make one (root), so Node sizes V8 from it as in a pod, with no V8 flag; else V8 flags standing in
 * for it (bench/cgroup.mjs says how they differ). Made once per bench process, removed when it ends.
 */
export const POD = (() => {
  const { cgroup, reason } = podCgroup();
  if (cgroup === undefined) {
    return {
      method: `V8 flags \`${HEAP_FLAGS_128MI.join(' ')}\` (${reason})`,
      flags: HEAP_FLAGS_128MI,
      wrap: undefined,
      remove: () => {},
    };
  }
  process.once('exit', cgroup.remove);
  return { method: 'a 128 MiB memory cgroup', flags: [], wrap: cgroup.wrap, remove: cgroup.remove };
})();
export const HEAP_128MI = POD.flags;

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
    pod: name.endsWith('@128Mi'),
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
    pod: name.includes('@128Mi'),
    portCount: 4,
    args: (ports) => [...flags, CLI, 'serve', '--ports', ports.join(','), '--host', '127.0.0.1'],
    // The load here comes from one address, this process: past 50 new connections a second the per-caller rate
    // would shed it (docs/security.md#under-load). Off, the same request path is measured; `--attack` measures it on.
    env: { OSM_HEALTHCHECK_PROBES: table, OSM_HEALTHCHECK_CALLER_RATE: '0' },
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
  const child = spawnNode(
    SERVER_CORE,
    contender.args(ports),
    contender.env,
    contender.pod ? POD.wrap : undefined,
  );
  await waitAnswering(ports, child);
  return { child, ports, startupMs: performance.now() - started, healthcheck: ports.at(-1) };
}
