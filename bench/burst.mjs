// The companion's worst burst: as many probes in flight as the code lets in, all against an app that
// never answers, so each one holds its sockets (and, for gRPC, a whole grpc-js channel) for its full timeout.
// serve admits 256 probes per listener (MAX_PROBES_PER_LISTENER, src/commands/serve.ts) and answers the rest 503 at
// once; the bench keeps 256 + 8 in flight on each of the four ports. The companion runs as the image runs it (under
// image/supervise.sh, which caps V8's heap at half the limit and restarts serve when it dies) in a memory cgroup with
// the limit inject writes and memory.oom.group on v2, as kubelet makes it; its working set is sampled every 100 ms.

import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { companionArgv } from './node-builds.mjs';
import { makePod } from './pods.mjs';
import { firstJsonLine, lineContaining, spawnCommand, stop } from './procs.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MiB = 2 ** 20;
export const BURST_IN_FLIGHT = 256 + 8;
const [SLOW_HTTP, DROPPED, SILENT] = [14101, 14102, 14103];

const SLOW_TABLE = {
  liveness: { app: { httpGet: { path: '/slow', port: SLOW_HTTP }, timeoutSeconds: 1 } },
  readiness: { app: { tcpSocket: { port: DROPPED }, timeoutSeconds: 1 } },
  startup: { app: { grpc: { port: SILENT }, timeoutSeconds: 1 } },
};

const BURST_TARGETS = [
  { name: 'HTTP (no answer)', port: 15901, path: '/osm-liveness-probe/app' },
  { name: 'TCP (SYN dropped)', port: 15902, path: '/osm-readiness-probe/app' },
  { name: 'gRPC (no HTTP/2)', port: 15903, path: '/osm-startup-probe/app' },
  {
    name: '/osm-healthcheck (SYN dropped)',
    port: 15904,
    path: '/osm-healthcheck',
    headers: { 'original-tcp-port': String(DROPPED) },
  },
];

/**
 * One burst of `seconds` against the companion of `build` in a cgroup of `tree` limited to `limitBytes`.
 * Returns working sets (MiB) idle, at the burst's peak and 5 s after, the cgroup's OOM kills, whether the
 * companion was still running, and the answers the burst got per port (status -> count).
 */
export async function runBurst({ build, tree, limitBytes, seconds }) {
  const pod = makePod('burst');
  const started = [];
  try {
    const drop = ['iptables', '-A', 'INPUT', '-p', 'tcp', '--dport', String(DROPPED), '-j', 'DROP'];
    const dropped = spawnSync(pod.run(drop)[0], pod.run(drop).slice(1), { encoding: 'utf8' });
    if (dropped.status !== 0) throw new Error(`burst: iptables in the pod failed: ${dropped.stderr}`);
    const app = spawnCommand(
      pod.run([process.execPath, resolve('bench/slow-app.mjs'), String(SLOW_HTTP), String(SILENT)]),
    );
    started.push(app);
    await lineContaining(app, 'listening');
    const cg = tree.child(`burst-companion-${limitBytes ?? 'unlimited'}`, {
      memoryMax: limitBytes,
      oomGroup: true,
    });
    const companion = spawnCommand(cg.wrap(pod.run(companionArgv(build))), {
      OSM_HEALTHCHECK_PROBES: JSON.stringify(SLOW_TABLE),
      // A burst from one address, as the soak's: the per-caller rate off (contenders.mjs says why).
      OSM_HEALTHCHECK_CALLER_RATE: '0',
    });
    started.push(companion);
    // serve's exits, each restarted by the supervisor (its log line).
    let restarts = 0;
    companion.stdout.on('data', (chunk) => {
      restarts += String(chunk).split('serve exited: restarting it').length - 1;
    });
    await lineContaining(companion, '"msg":"serving"');
    await sleep(2000);
    const idle = cg.workingSet() / MiB;
    const plan = {
      mode: 'burst',
      seconds,
      concurrency: BURST_IN_FLIGHT,
      timeoutMs: 5000,
      targets: BURST_TARGETS,
    };
    const prober = spawnCommand(
      pod.run([process.execPath, resolve('bench/pod-prober.mjs'), JSON.stringify(plan)]),
    );
    started.push(prober);
    const done = firstJsonLine(prober);
    let peak = 0;
    let finished = false;
    done.finally(() => {
      finished = true;
    });
    while (!finished) {
      if (companion.exitCode === null && companion.signalCode === null)
        peak = Math.max(peak, cg.workingSet() / MiB);
      await sleep(100);
    }
    const answers = Object.fromEntries(
      Object.entries(await done).map(([name, r]) => [
        name,
        { probes: r.latencies.length, failures: count(r.failures) },
      ]),
    );
    await sleep(5000);
    const running = companion.exitCode === null && companion.signalCode === null && restarts === 0;
    return {
      idle,
      peak,
      after: running ? cg.workingSet() / MiB : Number.NaN,
      oomKills: cg.oomKills(),
      running,
      restarts,
      answers,
      limitMiB: limitBytes === undefined ? Number.NaN : limitBytes / MiB,
      seconds,
    };
  } finally {
    await Promise.all(started.map(stop));
    pod.remove();
  }
}

/** ['503', '503', 'timeout'] -> { 503: 2, timeout: 1 } */
function count(values) {
  const counts = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
