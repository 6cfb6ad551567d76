// The fleet benchmark: what the companion costs a node that runs it in every pod. K pods, each a network
// namespace (bench/pods.mjs) with examples/app.mjs (run by the bench's own Node: the app is another image), the
// companion (`serve` with examples/probes.json: an HTTP, a TCP and a gRPC probe), a raw node:http server doing the
// Go osm-healthcheck's whole job (bench/floor.mjs: TCP checks on /osm-healthcheck), and an idle `node -e`: all
// three from one copy of the Node binary under test, so their shared pages are shared as on a node. The companion
// runs as the image runs it, under its supervisor (image/supervise.sh: a POSIX sh whose child is serve), and its
// memory is the two processes' together. Each process has a memory cgroup of its own (bench/cgroup-tree.mjs), for its working set as kubelet counts it. Before each run
// the binary and the build are dropped from the page cache and the companions start one after another, pod 0
// first: the first pod on a node faults the image's pages into its own cgroup, the others find them there.

import { copyFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runBurst } from './burst.mjs';
import { cgroupTree } from './cgroup-tree.mjs';
import { buildWith, companionArgv, dropFromPageCache } from './node-builds.mjs';
import { makePod } from './pods.mjs';
import { firstJsonLine, lineContaining, processTree, spawnCommand, stop } from './procs.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const MiB = 2 ** 20;
const inMiB = (m) => Object.fromEntries(Object.entries(m).map(([key, bytes]) => [key, bytes / MiB]));
export const FLOOR_PORT = 15999;
const COMPANION_PORTS = [15901, 15902, 15903, 15904];
const APP_TCP_PORT = 14002;
export const KINDS = ['idle', 'floor', 'companion'];

/** The probes of one fleet round: the companion's three (examples/probes.json), and as many TCP checks on the floor. */
export const ROUND_TARGETS = [
  { name: 'companion HTTP', port: 15901, path: '/osm-liveness-probe/app' },
  { name: 'companion TCP', port: 15902, path: '/osm-readiness-probe/app' },
  { name: 'companion gRPC', port: 15903, path: '/osm-startup-probe/app' },
  ...[1, 2, 3].map((n) => ({
    name: `floor TCP ${n}`,
    port: FLOOR_PORT,
    path: '/osm-healthcheck',
    headers: { 'original-tcp-port': String(APP_TCP_PORT) },
  })),
];

/** Reads /proc/PID/smaps_rollup. */
export const smapsText = (pid) => readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');

/** `smaps` of every process of PID's tree, summed: a supervised companion's RSS, PSS and private memory. */
function treeSmaps(smaps, pid) {
  const parts = processTree(pid).map(smaps);
  const sum = (key) => parts.reduce((total, part) => total + part[key], 0);
  return { rss: sum('rss'), pss: sum('pss'), private: sum('private') };
}

/** Starts examples/app.mjs in `pod` with the bench's Node; resolves once it listens. */
export async function startApp(pod) {
  const app = spawnCommand(pod.run([process.execPath, resolve('examples/app.mjs')]));
  await lineContaining(app, 'example app on');
  return app;
}

/**
 * One run of the fleet: K pods started, probed `rounds` times every `periodMs`, then sampled three times 1 s
 * apart. Returns per kind an array of samples `{ pod, smaps, workingSet }` and the companions' idle working sets.
 */
async function fleetRun({ build, tree, k, rounds, periodMs, run, smaps }) {
  const table = JSON.parse(readFileSync('examples/probes.json', 'utf8'));
  const pods = Array.from({ length: k }, (_, i) => makePod(`fleet${run}-${i}`));
  const procs = { idle: [], floor: [], companion: [] };
  const apps = [];
  try {
    for (const pod of pods) apps.push(await startApp(pod));
    dropFromPageCache([build.node, join(build.dir, 'dist')]);
    for (const [i, pod] of pods.entries()) {
      const cg = tree.child(`run${run}-companion${i}`);
      const child = spawnCommand(cg.wrap(pod.run(companionArgv(build))), {
        OSM_HEALTHCHECK_PROBES: JSON.stringify(table),
      });
      // One at a time, so pod 0's companion is the one that faults the shared pages in.
      await lineContaining(child, '"msg":"serving"');
      procs.companion.push({ child, cg });
    }
    for (const [i, pod] of pods.entries()) {
      const cg = tree.child(`run${run}-floor${i}`);
      const child = spawnCommand(
        cg.wrap(pod.run([build.node, resolve('bench/floor.mjs'), String(FLOOR_PORT)])),
      );
      await lineContaining(child, 'listening');
      procs.floor.push({ child, cg });
    }
    for (const [i, pod] of pods.entries()) {
      const cg = tree.child(`run${run}-idle${i}`);
      const child = spawnCommand(cg.wrap(pod.run([build.node, '-e', 'setInterval(() => {}, 1 << 30)'])));
      procs.idle.push({ child, cg });
    }
    await sleep(1000);
    const idleMemory = procs.companion.map(({ cg }) => inMiB(cg.memory()));
    const plan = {
      mode: 'rounds',
      ready: [...COMPANION_PORTS, FLOOR_PORT],
      rounds,
      periodMs,
      targets: ROUND_TARGETS,
    };
    const probers = pods.map((pod) =>
      firstJsonLine(
        spawnCommand(pod.run([process.execPath, resolve('bench/pod-prober.mjs'), JSON.stringify(plan)])),
      ),
    );
    const probed = await Promise.all(probers);
    const failures = probed.flatMap((p) => Object.values(p).flatMap((t) => t.failures));
    const samples = { idle: [], floor: [], companion: [] };
    for (let s = 0; s < 3; s++) {
      if (s > 0) await sleep(1000);
      for (const kind of KINDS) {
        procs[kind].forEach(({ child, cg }, pod) => {
          samples[kind].push({ pod, smaps: treeSmaps(smaps, child.pid), ...inMiB(cg.memory()) });
        });
      }
    }
    return {
      samples,
      idleMemory,
      failures,
      probes: probed.flatMap((p) => Object.values(p)).reduce((n, t) => n + t.latencies.length, 0),
    };
  } finally {
    await Promise.all([...apps, ...KINDS.flatMap((kind) => procs[kind].map((p) => p.child))].map(stop));
    for (const pod of pods) pod.remove();
  }
}

/**
 * The fleet for one Node binary: its own build, `runs` runs of K pods. `smaps` parses a pid's smaps_rollup
 * (bench/kube-resources.mjs); `burst` is `{ limitBytes, seconds }` for bench/burst.mjs. Returns the raw samples
 * of every run and the burst's.
 */
export async function runFleet({ node, k, runs, rounds, periodMs, smaps, say, burst }) {
  const { tree, reason } = cgroupTree('osm-hc-fleet');
  if (tree === undefined) throw new Error(`fleet: ${reason}`);
  const built = buildWith(node);
  const build = { ...built, node: join(built.dir, 'node') };
  copyFileSync(node.path, build.node);
  try {
    const results = [];
    for (let run = 0; run < runs; run++) {
      say(`fleet ${node.version}: run ${run + 1}/${runs}, ${k} pods`);
      results.push(await fleetRun({ build, tree, k, rounds, periodMs, run, smaps }));
    }
    say(
      `fleet ${node.version}: burst of slow probes, ${burst.seconds} s, limit ${burst.limitBytes / MiB} MiB`,
    );
    const burstResult = await runBurst({ build, tree, ...burst });
    say(`fleet ${node.version}: the same burst with no memory limit`);
    burstResult.unlimited = await runBurst({ build, tree, seconds: burst.seconds, limitBytes: undefined });
    return {
      node: node.version,
      k,
      runs,
      rounds,
      periodMs,
      cgroupVersion: tree.version,
      results,
      burst: burstResult,
    };
  } finally {
    tree.remove();
    built.remove();
  }
}
