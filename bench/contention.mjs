// CPU contention: the companion's probe latency when every core is kept busy by sibling cgroups, each
// weighted by its CPU request as kubelet and runc weight pods (bench/kube-resources.mjs). A parent cgroup stands for
// the node's pods with the node's whole CPU (cores x 1000m); in it the companion's cgroup gets a candidate request
// and two busy siblings the rest, each running one busy loop per core. The app (examples/app.mjs) and the prober
// (kubelet) run outside that parent: the app is fine, only the companion waits for CPU. Candidates are measured
// in interleaved rounds (the companion's weight is rewritten between windows, no restart), and once with the
// siblings stopped for reference.

import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { cgroupTree } from './cgroup-tree.mjs';
import { cpuKnob } from './kube-resources.mjs';
import { makePod } from './pods.mjs';
import { cpuMicros, firstJsonLine, lineContaining, spawnCommand, stop } from './procs.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const KUBELET_TIMEOUT_MS = 1000;
const PROBES = [
  { name: 'HTTP', port: 15901, path: '/osm-liveness-probe/app' },
  { name: 'TCP', port: 15902, path: '/osm-readiness-probe/app' },
  { name: 'gRPC', port: 15903, path: '/osm-startup-probe/app' },
];

/**
 * `candidates` (millicores) in `rounds` interleaved rounds of `seconds` each, probes every `periodMs` per kind.
 * Returns per candidate (and `uncontended`) the latencies, failures and the companion's CPU µs per probe.
 */
export async function runContention({ build, candidates, rounds, seconds, periodMs, say }) {
  const { tree, reason } = cgroupTree('osm-hc-cpu');
  if (tree === undefined) throw new Error(`contention: ${reason}`);
  const cores = cpus().length;
  const nodeMilliCpu = cores * 1000;
  tree.setCpu(nodeMilliCpu);
  const pod = makePod('cpu');
  const started = [];
  try {
    const app = spawnCommand(pod.run([process.execPath, resolve('examples/app.mjs')]));
    started.push(app);
    await lineContaining(app, 'example app on');
    const cg = tree.child('companion', { milliCpu: candidates[0] });
    const table = readFileSync('examples/probes.json', 'utf8');
    const companion = spawnCommand(cg.wrap(pod.run([build.node, build.cli, 'serve'])), {
      OSM_HEALTHCHECK_PROBES: table,
    });
    started.push(companion);
    await lineContaining(companion, '"msg":"serving"');
    const siblings = ['busy-a', 'busy-b'].map((name) => tree.child(name, { milliCpu: nodeMilliCpu / 2 }));
    const burners = siblings.flatMap((sib) =>
      Array.from({ length: cores }, () => spawnCommand(sib.wrap(['sh', '-c', 'while :; do :; done']))),
    );
    started.push(...burners);
    const burn = (on) => {
      for (const b of burners) b.kill(on ? 'SIGCONT' : 'SIGSTOP');
    };
    const window = async (windowSeconds, period = periodMs) => {
      const plan = {
        mode: 'loops',
        ready: [15901, 15902, 15903, 15904],
        seconds: windowSeconds,
        periodMs: period,
        targets: PROBES,
      };
      const before = cpuMicros(companion.pid);
      const probed = await firstJsonLine(
        spawnCommand(pod.run([process.execPath, resolve('bench/pod-prober.mjs'), JSON.stringify(plan)])),
      );
      const all = Object.values(probed);
      const count = all.reduce((n, r) => n + r.latencies.length, 0);
      return {
        latencies: all.flatMap((r) => r.latencies),
        failures: all.flatMap((r) => r.failures),
        cpuPerProbe: (cpuMicros(companion.pid) - before) / count,
      };
    };
    burn(false);
    say('contention: warm-up (siblings stopped)');
    await window(3, 20);
    const rows = new Map([['uncontended', { milliCpu: undefined, latencies: [], failures: [], cpu: [] }]]);
    for (const m of candidates)
      rows.set(m, { milliCpu: m, knob: cpuKnob(tree.version, m), latencies: [], failures: [], cpu: [] });
    const add = (key, w) => {
      const row = rows.get(key);
      row.latencies.push(...w.latencies);
      row.failures.push(...w.failures);
      row.cpu.push(w.cpuPerProbe);
    };
    add('uncontended', await window(seconds));
    burn(true);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? candidates : [...candidates].reverse();
      for (const m of order) {
        say(`contention: round ${round + 1}/${rounds}, companion request ${m}m`);
        cg.setCpu(m);
        for (const sib of siblings) sib.setCpu((nodeMilliCpu - m) / 2);
        await sleep(500);
        add(m, await window(seconds));
      }
    }
    return { cores, cgroupVersion: tree.version, rounds, seconds, periodMs, rows: [...rows.values()] };
  } finally {
    await Promise.all(started.map(stop));
    pod.remove();
    tree.remove();
  }
}
