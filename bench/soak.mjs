// `npm run bench -- --soak SECONDS`: one companion as in a pod (heap of a 128 MiB pod, a table with an
// HTTP liveness, a TCP readiness and a gRPC startup probe) on the server core for SECONDS, under kubelet-rate
// probes on all four ports and a flood on the healthcheck port every flood interval, sampled for its memory, open
// descriptors and V8 heap. It stops by itself and kills everything it started.

import { readdirSync } from 'node:fs';
import { load, scrapeHeapUsed } from './clients.mjs';
import { CLI, launch, POD, probeCompanion } from './contenders.mjs';
import { CLIENT_CORE, firstJsonLine, memory, spawnNode, stop } from './procs.mjs';
import { machineInfo, writeBenchmarks } from './report.mjs';
import { renderSoak } from './soak-report.mjs';

/** kubelet's default timeoutSeconds. */
const PROBE_TIMEOUT_MS = 1000;
const FLOOD_CONNECTIONS = 100;
// A soak still running this long after its end (a load run or a prober that never finishes) is stopped.
const OVERRUN_SECONDS = 30;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `task` `times` times, the k-th at k·period seconds after `origin`: at once when running late, never before
 * (a timer may fire a little early, and the report puts each flood in the interval it started in).
 */
async function every(origin, periodSeconds, times, task) {
  for (let k = 0; k < times; k++) {
    const at = origin + k * periodSeconds * 1000;
    while (performance.now() < at) await sleep(at - performance.now() + 1);
    await task();
  }
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

/** The kubelet probes of the soak: the rewritten probe of each table entry, and a tcpSocket one on 15904. */
function kubeletProbes(ports, tcpCheck) {
  const [liveness, readiness, startup, healthcheck] = ports;
  return [
    { role: 'liveness', port: liveness, path: '/osm-liveness-probe/app', headers: {} },
    { role: 'readiness', port: readiness, path: '/osm-readiness-probe/app', headers: {} },
    { role: 'startup', port: startup, path: '/osm-startup-probe/app', headers: {} },
    { role: 'healthcheck', port: healthcheck, path: '/osm-healthcheck', headers: tcpCheck },
  ];
}

/** What a scrape that gave no heap figure got: the status, or a 200 without the series. */
function scrapeOutcome(scrape) {
  return scrape.status === 200 && scrape.heapUsed === null
    ? '200 without nodejs_heap_size_used_bytes'
    : scrape.status;
}

/**
 * The soak itself (options from soak-options.mjs); `say` reports progress. Resolves with everything the report
 * needs: the samples (`t` in seconds since the companion answered), the floods and each port's probes.
 */
export async function soak(options, say) {
  const info = { ...machineInfo(CLI), podHeap: POD.method };
  const overrun = setTimeout(
    () => {
      say(`soak: still running ${OVERRUN_SECONDS} s past its end; stopping everything it started`);
      process.exit(1);
    },
    (options.seconds + OVERRUN_SECONDS) * 1000,
  );
  overrun.unref();
  // Killed or interrupted: process.exit runs procs.mjs's handler, which kills every child still running.
  const interrupted = (signal) => {
    say(`soak: ${signal}; stopping everything it started`);
    process.exit(1);
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  const started = [];
  try {
    const app = spawnNode(CLIENT_CORE, ['bench/app.mjs']);
    started.push(app);
    const appPorts = await firstJsonLine(app);
    const contender = probeCompanion(appPorts);
    const companion = await launch(contender);
    started.push(companion.child);
    const pid = companion.child.pid;
    const healthcheck = companion.healthcheck;
    const tcpCheck = { 'original-tcp-port': String(appPorts.tcp) };
    const probes = kubeletProbes(companion.ports, tcpCheck);
    const origin = performance.now();
    const epochOrigin = Date.now();
    const elapsed = () => (performance.now() - origin) / 1000;
    const probers = probes.map((p) => {
      const args = [
        String(p.port),
        p.path,
        String(options.probePeriodSeconds * 1000),
        String(PROBE_TIMEOUT_MS),
      ];
      const child = spawnNode(CLIENT_CORE, [
        'bench/prober.mjs',
        ...args,
        String(options.seconds),
        JSON.stringify(p.headers),
      ]);
      started.push(child);
      // Read from the start: a report printed before anyone listens would be lost to the drain in spawnNode.
      return firstJsonLine(child);
    });
    say(`soak: ${contender.name}, ${options.seconds} s, pid ${pid}`);

    const samples = [];
    let metricsOutcome = null;
    // Every start before the end: the last window is as full as the others.
    const sampleCount = Math.ceil(options.seconds / options.sampleSeconds);
    const sampling = every(origin, options.sampleSeconds, sampleCount, async () => {
      if (exited(companion.child))
        throw new Error(`the companion exited (${companion.child.exitCode ?? companion.child.signalCode})`);
      const t = elapsed();
      const { rss, anon } = memory(pid);
      // Counted before the scrape opens its own connection.
      const fds = readdirSync(`/proc/${pid}/fd`).length;
      const scrape = await scrapeHeapUsed(healthcheck);
      metricsOutcome = scrapeOutcome(scrape);
      samples.push({ t, rss, anon, fds, heapUsed: scrape.heapUsed });
    });
    const floods = [];
    // Every flood that ends by the end.
    const floodCount = Math.floor((options.seconds - options.floodSeconds) / options.floodEverySeconds) + 1;
    const flooding = every(origin, options.floodEverySeconds, floodCount, async () => {
      const t = elapsed();
      const r = await load({
        port: healthcheck,
        path: '/osm-healthcheck',
        headers: tcpCheck,
        connections: FLOOD_CONNECTIONS,
        seconds: options.floodSeconds,
      });
      floods.push({ t, rps: r.rps, count: r.count, odd: r.errors + r.non2xx });
      say(`soak: ${Math.round(t)} s of ${options.seconds}, flood ${Math.round(r.rps)} req/s`);
    });
    await Promise.all([sampling, flooding]);
    const reports = await Promise.all(probers);
    info.loadAfter = info.loadNow();
    return {
      info,
      options,
      companion: contender.name,
      floodConnections: FLOOD_CONNECTIONS,
      probeTimeoutMs: PROBE_TIMEOUT_MS,
      samples,
      floods,
      metricsOutcome,
      probes: probes.map((p, i) => ({
        role: p.role,
        count: reports[i].latencies.length,
        failures: reports[i].failures,
        failedAt: reports[i].failedAt.map((ms) => (ms - epochOrigin) / 1000),
        latencies: reports[i].latencies,
      })),
    };
  } finally {
    clearTimeout(overrun);
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    await Promise.all(started.map(stop));
    POD.remove();
  }
}

/** The soak run of `npm run bench -- --soak SECONDS`: soaks, prints the block and writes it into BENCHMARKS.md. */
export async function runSoak(options) {
  const say = (text) => process.stderr.write(`${text}\n`);
  const text = renderSoak(await soak(options, say));
  process.stdout.write(`${text}\n`);
  // As for the benchmark: a soak of another build (BENCH_CLI) is for comparison and leaves the file alone.
  if (process.env.BENCH_CLI === undefined) writeBenchmarks(text, 'soak');
  else say(`BENCH_CLI=${process.env.BENCH_CLI}: BENCHMARKS.md left as it was`);
}
