// `npm run bench`: the companion against the Node floor in one interleaved run. Servers run on core 0;
// this process (load generator, probe clients), the app and the liveness prober on core 1. Prints the tables
// and writes them, with machine info, into BENCHMARKS.md. `--soak SECONDS` runs the soak instead (soak.mjs);
// `--webhook` the webhook in a big cluster (webhook-cluster.mjs).
// `--inject` inject's time and memory by input size (inject.mjs); `--recorder` what recording a probe run for
// /metrics costs against the floor of any counting (recorder.mjs); `--analyze` analyze over 10,000 pods on a real
// kube-apiserver (analyze.mjs); `--attack` each caller-load shape beside a kubelet-like prober (attack.mjs).

import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { analyzePlan, renderAnalyze, runAnalyzeBench } from './analyze.mjs';
import { attackPlan, renderAttack, runAttack } from './attack.mjs';
import { grpcProbe, httpProbe, load, tcpProbe } from './clients.mjs';
import { CLI, contenders, launch, POD, probeCompanion, probeFloor } from './contenders.mjs';
import { fleetOptions } from './fleet-options.mjs';
import { runFleetParts } from './fleet-run.mjs';
import { injectPlan, renderInject, runInject } from './inject.mjs';
import {
  CLIENT_CORE,
  cpuMicros,
  firstJsonLine,
  freePorts,
  memory,
  pinned,
  spawnNode,
  stop,
} from './procs.mjs';
import { recorderPlan, renderRecorder, runRecorder } from './recorder.mjs';
import { machineInfo, render, writeBenchmarks } from './report.mjs';
import { runSoak } from './soak.mjs';
import { soakOptions } from './soak-options.mjs';
import { percentile } from './stats.mjs';
import { renderWebhook, runWebhookBench, webhookPlan } from './webhook-cluster.mjs';

// Checked before anything starts, so a bad flag or knob is answered at once.
let soakPlan;
let parts;
let fleetPlan;
let webhookRun;
let injectSizes;
let recorderRun;
let analyzeRun;
let attackRun;
try {
  const { values } = parseArgs({
    options: {
      soak: { type: 'string' },
      ratios: { type: 'boolean' },
      fleet: { type: 'boolean' },
      contention: { type: 'boolean' },
      inject: { type: 'boolean' },
      recorder: { type: 'boolean' },
      node: { type: 'string', multiple: true },
      webhook: { type: 'boolean' },
      analyze: { type: 'boolean' },
      attack: { type: 'boolean' },
    },
  });
  if (values.attack) attackRun = attackPlan(process.env);
  if (values.analyze) analyzeRun = analyzePlan(process.env);
  if (values.soak !== undefined) soakPlan = soakOptions(values.soak, process.env);
  if (values.webhook) webhookRun = webhookPlan(process.env);
  const all = ['ratios', 'fleet', 'contention', 'inject', 'recorder'];
  const chosen = all.filter((part) => values[part]);
  // No part named: all of them (a soak is a run of its own).
  parts = new Set(soakPlan !== undefined ? [] : chosen.length > 0 ? chosen : all);
  if (parts.has('fleet') || parts.has('contention')) fleetPlan = fleetOptions(values.node ?? [], process.env);
  if (parts.has('inject')) injectSizes = injectPlan(process.env);
  if (parts.has('recorder')) recorderRun = recorderPlan(process.env);
} catch (err) {
  process.stderr.write(`bench/run.mjs: ${err.message}\n`);
  process.exit(2);
}

// The webhook in a big cluster is a run of its own, unpinned: two API servers and etcd share the machine with it.
if (webhookRun !== undefined) {
  const text = renderWebhook(await runWebhookBench(webhookRun));
  process.stdout.write(`${text}\n`);
  const kind = webhookRun.unlimited ? 'webhook-unlimited' : 'webhook';
  if (process.env.BENCH_CLI === undefined) writeBenchmarks(text, kind);
  else process.stderr.write(`BENCH_CLI=${process.env.BENCH_CLI}: BENCHMARKS.md left as it was\n`);
  process.exit(0);
}

// analyze against a big cluster is a run of its own, unpinned: the API server and etcd share the machine with it.
if (analyzeRun !== undefined) {
  const cli = process.env.BENCH_CLI ?? 'dist/cli.mjs';
  const info = machineInfo(cli);
  const text = renderAnalyze(await runAnalyzeBench(analyzeRun, cli), info);
  process.stdout.write(`${text}\n`);
  if (process.env.BENCH_CLI === undefined) writeBenchmarks(text, 'analyze');
  else process.stderr.write(`BENCH_CLI=${process.env.BENCH_CLI}: BENCHMARKS.md left as it was\n`);
  process.exit(0);
}

// The attack shapes are a run of their own: the companion on the server core, this process (kubelet's prober, the
// app) and the attacker on the client core.
if (attackRun !== undefined) {
  if (pinned) spawnSync('taskset', ['-a', '-p', '-c', CLIENT_CORE, String(process.pid)], { stdio: 'ignore' });
  const cli = process.env.BENCH_CLI ?? 'dist/cli.mjs';
  const info = machineInfo(cli);
  const text = renderAttack(await runAttack(attackRun, (line) => process.stderr.write(`${line}\n`)), info);
  process.stdout.write(`${text}\n`);
  if (process.env.BENCH_CLI === undefined) writeBenchmarks(text, 'attack');
  else process.stderr.write(`BENCH_CLI=${process.env.BENCH_CLI}: BENCHMARKS.md left as it was\n`);
  process.exit(0);
}

// inject is one process at a time on whatever core is free, judged on its own CPU time: unpinned, first.
if (injectSizes !== undefined && process.env.BENCH_PINNED !== '1') {
  const cli = process.env.BENCH_CLI ?? 'dist/cli.mjs';
  const info = machineInfo(cli);
  const text = renderInject(runInject(injectSizes, cli), info);
  process.stdout.write(`${text}\n`);
  if (process.env.BENCH_CLI === undefined) writeBenchmarks(text, 'inject');
}

// The recorder is a second of CPU in this process, judged as a ratio to its floor in the same rounds: unpinned.
if (recorderRun !== undefined && process.env.BENCH_PINNED !== '1') {
  const text = renderRecorder(
    await runRecorder(recorderRun),
    machineInfo(process.env.BENCH_CLI ?? 'dist/cli.mjs'),
  );
  process.stdout.write(`${text}\n`);
  if (process.env.BENCH_CLI === undefined) writeBenchmarks(text, 'recorder');
}
const inProcess = new Set(['inject', 'recorder']);
if (parts.size > 0 && [...parts].every((part) => inProcess.has(part))) process.exit(0);

// The fleet and contention parts run unpinned (their pods and busy siblings spread over every core as on a node),
// so they go before the re-run on the client core below.
if (fleetPlan !== undefined && process.env.BENCH_PINNED !== '1') {
  await runFleetParts(fleetPlan, parts);
  if (!parts.has('ratios')) process.exit(0);
}

if (pinned && process.env.BENCH_PINNED !== '1') {
  const own = soakPlan !== undefined ? ['--soak', String(soakPlan.seconds)] : ['--ratios'];
  const argv = ['-c', CLIENT_CORE, process.execPath, process.argv[1], ...own];
  const child = spawnSync('taskset', argv, { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } });
  process.exit(child.status ?? 1);
}

if (soakPlan !== undefined) {
  await runSoak(soakPlan);
  // The soak is the whole run: the benchmark below is not part of it.
  process.exit(0);
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);
const PROBES = Number(process.env.BENCH_PROBES ?? 150);
const FAIRNESS_SECONDS = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 4);
// V8's memory reducer starts 8 s after the last major GC of a burst; 10 s leaves it time to run.
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rotate = (list, by) => list.map((_, i) => list[(i + by) % list.length]);
const say = (text) => process.stderr.write(`${text}\n`);

const began = performance.now();
const info = { ...machineInfo(CLI), podHeap: POD.method };
const app = spawnNode(CLIENT_CORE, ['bench/app.mjs']);
const appPorts = await firstJsonLine(app);
const [refused] = await freePorts(1);
const tcpHeader = (port) => ({ 'original-tcp-port': String(port) });
const PATHS = {
  open: { path: '/osm-healthcheck', headers: tcpHeader(appPorts.tcp) },
  refused: { path: '/osm-healthcheck', headers: tcpHeader(refused) },
};
const CONFIGS = ['open', 'refused'].flatMap((path) =>
  [10, 100].map((connections) => ({ path, connections })),
);
const all = contenders(appPorts, refused);
const names = all.map((c) => c.name);
const perName = () => Object.fromEntries(names.map((n) => [n, []]));

const results = {
  info,
  rounds: ROUNDS,
  seconds: SECONDS,
  probes: PROBES,
  contenders: names,
  configs: CONFIGS.map((c) => `${c.path} c${c.connections}`),
  startupMs: perName(),
  idle: perName(),
  loaded: perName(),
  settled: perName(),
  settleSeconds: SETTLE_SECONDS,
  throughput: Object.fromEntries(CONFIGS.map((c) => [`${c.path} c${c.connections}`, perName()])),
  overhead: {},
  fairness: { latencies: [], failures: [], floodRps: [], perRoundP99: [] },
  grpcStartupMs: [],
};

/** One autocannon run against a running contender, with the server's CPU time per request. */
async function loadRun(running, cfg, seconds) {
  const { path, headers } = PATHS[cfg.path];
  const before = cpuMicros(running.child.pid);
  const r = await load({ port: running.healthcheck, path, headers, connections: cfg.connections, seconds });
  return { ...r, cpuPerRequest: (cpuMicros(running.child.pid) - before) / r.count };
}

/** Start each contender (interleaved), read memory idle, load it, read memory after load, stop it. */
async function serverRound(round, record) {
  const order = rotate(all, round);
  const running = new Map();
  for (const c of order) running.set(c.name, await launch(c));
  await sleep(1000);
  const idle = new Map(order.map((c) => [c.name, memory(running.get(c.name).child.pid)]));
  for (const c of order) {
    for (const path of ['open', 'refused'])
      await loadRun(running.get(c.name), { path, connections: 100 }, 0.5);
  }
  for (const cfg of record ? CONFIGS : []) {
    for (const c of order) {
      const r = await loadRun(running.get(c.name), cfg, SECONDS);
      r.unexpected = r.errors + (cfg.path === 'open' ? r.non2xx : r.ok2xx);
      // A few odd answers are the machine's (a connect lost under load); many mean the bench is miswired.
      if (r.unexpected > 0.02 * r.count) throw new Error(`${c.name} ${cfg.path}: ${JSON.stringify(r)}`);
      results.throughput[`${cfg.path} c${cfg.connections}`][c.name].push(r);
    }
  }
  await sleep(200);
  const loaded = new Map(order.map((c) => [c.name, memory(running.get(c.name).child.pid)]));
  if (record) await sleep(SETTLE_SECONDS * 1000);
  for (const c of order) {
    const { child, startupMs } = running.get(c.name);
    if (record) {
      results.startupMs[c.name].push(startupMs);
      results.idle[c.name].push(idle.get(c.name));
      results.loaded[c.name].push(loaded.get(c.name));
      results.settled[c.name].push(memory(child.pid));
    }
    await stop(child);
  }
}

/** Sequential kubelet-style probes: direct to the app, through the companion, and (TCP) through the floor. */
function probeKinds(companion, floor) {
  const [liveness, , startup, healthcheck] = companion.ports;
  return {
    HTTP: {
      direct: () => httpProbe(appPorts.http, '/live'),
      via: () => httpProbe(liveness, '/osm-liveness-probe/app'),
    },
    TCP: {
      direct: () => tcpProbe(appPorts.tcp),
      via: () => httpProbe(healthcheck, '/osm-healthcheck', tcpHeader(appPorts.tcp)),
      floor: () => httpProbe(floor.healthcheck, '/osm-healthcheck', tcpHeader(appPorts.tcp)),
    },
    gRPC: { direct: () => grpcProbe(appPorts.grpc), via: () => httpProbe(startup, '/osm-startup-probe/app') },
  };
}

async function probeRun(kind, mode, probe, count) {
  const ms = [];
  for (let i = 0; i < count; i++) {
    const r = await probe();
    if (!r.ok) throw new Error(`${kind} ${mode} probe failed: ${r.status}`);
    ms.push(r.ms);
  }
  return ms;
}

async function overheadRound(round, kinds) {
  for (const [kind, modes] of Object.entries(kinds)) {
    const order = Object.keys(modes);
    for (const mode of round % 2 === 0 ? order : order.reverse()) {
      await probeRun(kind, mode, modes[mode], 20);
      const ms = await probeRun(kind, mode, modes[mode], PROBES);
      results.overhead[kind] ??= {};
      results.overhead[kind][mode] ??= [];
      results.overhead[kind][mode].push({ p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) });
    }
  }
}

/** Liveness probes every 100 ms (timeout 1 s) on the liveness port while /osm-healthcheck is flooded. */
async function fairnessRound(companion) {
  const [liveness, , , healthcheck] = companion.ports;
  const flood = load({ port: healthcheck, ...PATHS.open, connections: 100, seconds: FAIRNESS_SECONDS + 1 });
  await sleep(500);
  const args = [String(liveness), '/osm-liveness-probe/app', '100', '1000', String(FAIRNESS_SECONDS)];
  const { latencies, failures } = await firstJsonLine(spawnNode(CLIENT_CORE, ['bench/prober.mjs', ...args]));
  const flooded = await flood;
  results.fairness.latencies.push(...latencies);
  results.fairness.failures.push(...failures);
  results.fairness.perRoundP99.push(percentile(latencies, 0.99));
  results.fairness.floodRps.push(flooded.rps);
}

say(`osm-healthcheck bench: ${CLI}, ${ROUNDS} rounds, ${SECONDS} s per load run, pinned=${pinned}`);
say('warm-up (not recorded)');
await serverRound(0, false);
const probeTarget = probeCompanion(appPorts);
const companion = await launch(probeTarget);
const floor = await launch(probeFloor());
const kinds = probeKinds(companion, floor);
// grpc-js and the HTTP paths take a few hundred calls to reach optimised code, on both sides.
for (const [kind, modes] of Object.entries(kinds)) {
  for (const [mode, probe] of Object.entries(modes)) await probeRun(kind, mode, probe, 200);
}
for (let round = 0; round < ROUNDS; round++) {
  say(`round ${round + 1}/${ROUNDS}`);
  await serverRound(round, true);
  await overheadRound(round, kinds);
  await fairnessRound(companion);
  const grpcStart = await launch(probeTarget);
  results.grpcStartupMs.push(grpcStart.startupMs);
  await stop(grpcStart.child);
}
await Promise.all([stop(companion.child), stop(floor.child), stop(app)]);
POD.remove();
results.info.loadAfter = info.loadNow();
results.info.elapsedSeconds = Math.round((performance.now() - began) / 1000);

const text = render(results);
process.stdout.write(`${text}\n`);
// A run against another build (BENCH_CLI) is for comparison: it does not replace the repo's own numbers.
if (process.env.BENCH_CLI === undefined) writeBenchmarks(text);
else say(`BENCH_CLI=${process.env.BENCH_CLI}: BENCHMARKS.md left as it was`);
