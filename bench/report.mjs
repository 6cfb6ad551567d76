// Turns the benchmark's raw numbers into Markdown tables with the targets, and writes them into
// BENCHMARKS.md between the bench:results markers of the Node major that ran (the prose around them is kept).

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { pinned } from './procs.mjs';
import { formatSummary as fmt, percentile, ratioSummary, summary } from './stats.mjs';

const FILE = 'BENCHMARKS.md';
const FLOOR = 'floor';
const IMAGE = 'companion@128Mi';
const PLAIN = 'companion';
// Each contender's throughput is judged against the floor started the same way (the same heap flags).
const SAME_HEAP_FLOOR = { [IMAGE]: 'floor@128Mi', [PLAIN]: FLOOR };

function git(...args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

export function machineInfo(cli) {
  const loadNow = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  const dirty = git('status', '--porcelain', '--', 'src', 'scripts') === '' ? '' : ' + uncommitted changes';
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    cpu: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    kernel: release(),
    node: process.version,
    commit: `${git('rev-parse', '--short', 'HEAD') || 'unknown'}${dirty}`,
    cli,
    pinned,
    loadBefore: loadNow(),
    loadNow,
  };
}

const verdict = (ok) => (ok ? 'met' : '**missed**');
const times = (s) => `${fmt(s, 2)}×`;
const table = (head, rows) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
const pick = (runs, key) => runs.map((x) => x[key]);

function overheadOf(r, kind) {
  const { direct, via } = r.overhead[kind];
  return summary(via.map((v, i) => v.p50 - direct[i].p50));
}

function targets(r) {
  const rows = [];
  const ratio = (name, values, base) => ratioSummary(values(name), base);
  for (const config of r.configs) {
    const rps = (name) => pick(r.throughput[config][name], 'rps');
    const [image, plain] = [IMAGE, PLAIN].map((n) => ratio(n, rps, rps(SAME_HEAP_FLOOR[n])));
    rows.push([
      `throughput ${config} ≥ 0.9× floor (same heap)`,
      times(image),
      times(plain),
      verdict(image.median >= 0.9 && plain.median >= 0.9),
    ]);
  }
  // A memory limit does not change start-up, but the flags that stand in for it do: start-up is the plain run's.
  const startup = ratio(PLAIN, (n) => r.startupMs[n], r.startupMs[FLOOR]);
  rows.push([
    'start-up ≤ 1.3× floor',
    `${times(startup)} (plain run)`,
    times(startup),
    verdict(startup.median <= 1.3),
  ]);
  const limits = [
    ['RSS idle ≤ 1.15× floor', (n) => pick(r.idle[n], 'rss'), pick(r.idle[FLOOR], 'rss'), 1.15],
    ["RSS after load ≤ 1.3× floor's idle", (n) => pick(r.loaded[n], 'rss'), pick(r.idle[FLOOR], 'rss'), 1.3],
  ];
  // For scale, not judged: the floor itself under the same load, and both once V8's memory reducer has run.
  const floorLoaded = ratioSummary(pick(r.loaded['floor@128Mi'], 'rss'), pick(r.idle[FLOOR], 'rss'));
  const settled = (n) => ratioSummary(pick(r.settled[n], 'rss'), pick(r.idle[FLOOR], 'rss'));
  for (const [label, values, base, limit] of limits) {
    const [image, plain] = [IMAGE, PLAIN].map((n) => ratio(n, values, base));
    rows.push([label, times(image), times(plain), verdict(image.median <= limit)]);
  }
  rows.push([
    `(not judged) RSS after load: floor@128Mi itself; then ${r.settleSeconds} s later`,
    `floor@128Mi ${times(floorLoaded)}; ${IMAGE} ${times(settled(IMAGE))} later`,
    times(settled(PLAIN)),
    '—',
  ]);
  for (const kind of Object.keys(r.overhead)) {
    const extra = overheadOf(r, kind);
    rows.push([`probe overhead ${kind} p50 ≤ 1 ms`, `${fmt(extra, 2)} ms`, '—', verdict(extra.median <= 1)]);
  }
  const failures = r.fairness.failures.length;
  rows.push([
    'fairness: 0 failed liveness probes',
    `${failures} of ${r.fairness.latencies.length}`,
    '—',
    verdict(failures === 0),
  ]);
  const head = ['target', `${IMAGE} (heap as in a 128 MiB pod)`, `${PLAIN} (no memory limit)`, 'verdict'];
  return table(head, rows);
}

function overhead(r) {
  const rows = Object.entries(r.overhead).map(([kind, modes]) => [
    kind,
    fmt(summary(pick(modes.direct, 'p50')), 2),
    fmt(summary(pick(modes.via, 'p50')), 2),
    fmt(overheadOf(r, kind), 2),
    modes.floor === undefined ? '—' : fmt(summary(pick(modes.floor, 'p50')), 2),
    fmt(summary(pick(modes.direct, 'p99')), 2),
    fmt(summary(pick(modes.via, 'p99')), 2),
  ]);
  const head = [
    'probe',
    'direct p50',
    'via companion p50',
    'overhead p50',
    'via floor p50',
    'direct p99',
    'via companion p99',
  ];
  return table(head, rows);
}

function throughput(r) {
  const rows = [];
  for (const config of r.configs) {
    const base = r.throughput[config][FLOOR];
    const sameHeap = (name) => {
      const floor = SAME_HEAP_FLOOR[name];
      if (floor === undefined) return '—';
      return times(
        ratioSummary(pick(r.throughput[config][name], 'rps'), pick(r.throughput[config][floor], 'rps')),
      );
    };
    for (const name of r.contenders) {
      const runs = r.throughput[config][name];
      rows.push([
        config,
        name,
        fmt(summary(pick(runs, 'rps')), 0),
        name === FLOOR ? '1' : times(ratioSummary(pick(runs, 'rps'), pick(base, 'rps'))),
        sameHeap(name),
        fmt(summary(pick(runs, 'p99')), 0),
        fmt(summary(pick(runs, 'cpuPerRequest')), 0),
        name === FLOOR ? '1' : times(ratioSummary(pick(runs, 'cpuPerRequest'), pick(base, 'cpuPerRequest'))),
        String(runs.reduce((sum, x) => sum + x.unexpected, 0)),
      ]);
    }
  }
  const head = [
    'path',
    'server',
    'req/s',
    'vs floor',
    'vs floor, same heap',
    'p99 ms',
    'server CPU µs/req',
    'vs floor',
    'odd answers',
  ];
  return table(head, rows);
}

function memoryAndStartup(r) {
  const floorIdle = pick(r.idle[FLOOR], 'rss');
  const rows = r.contenders.map((name) => [
    name,
    fmt(summary(r.startupMs[name]), 0),
    times(ratioSummary(r.startupMs[name], r.startupMs[FLOOR])),
    fmt(summary(pick(r.idle[name], 'rss')), 1),
    times(ratioSummary(pick(r.idle[name], 'rss'), floorIdle)),
    fmt(summary(pick(r.loaded[name], 'rss')), 1),
    times(ratioSummary(pick(r.loaded[name], 'rss'), floorIdle)),
    fmt(summary(pick(r.settled[name], 'rss')), 1),
    fmt(summary(pick(r.loaded[name], 'hwm')), 1),
    `${fmt(summary(pick(r.idle[name], 'anon')), 1)} / ${fmt(summary(pick(r.loaded[name], 'anon')), 1)}`,
  ]);
  const head = [
    'server',
    'start-up ms',
    'vs floor',
    'RSS idle MiB',
    'vs floor idle',
    'RSS after load MiB',
    'vs floor idle',
    `RSS ${r.settleSeconds} s later MiB`,
    'peak RSS MiB',
    'anonymous RSS idle / after load MiB',
  ];
  return table(head, rows);
}

function fairness(r) {
  const f = r.fairness;
  const row = [
    String(f.latencies.length),
    String(f.failures.length),
    percentile(f.latencies, 0.5).toFixed(1),
    percentile(f.latencies, 0.99).toFixed(1),
    fmt(summary(f.perRoundP99), 1),
    Math.max(...f.latencies).toFixed(1),
    fmt(summary(f.floodRps), 0),
  ];
  const head = ['probes', 'failed', 'p50 ms', 'p99 ms (all)', 'p99 ms per round', 'max ms', 'flood req/s'];
  return table(head, [row]);
}

export function render(r) {
  const i = r.info;
  return [
    `Run ${i.date}: ${i.cpu}, ${i.memory}, Linux ${i.kernel}, Node ${i.node}; commit ${i.commit}; CLI ` +
      `\`${i.cli}\`; servers ${i.pinned ? 'pinned to core 0, clients (load generator, app, probers) to core 1' : 'not pinned'}; ` +
      `load average ${i.loadBefore} before, ${i.loadAfter} after; ${r.rounds} rounds, ${r.seconds} s per load run, ` +
      `${r.probes} probes per overhead sample, ${i.elapsedSeconds} s in all. Cells: median over rounds (min–max); ` +
      'ratios are taken per round against the floor of the same round, then summarised.',
    '',
    '**Targets**',
    '',
    targets(r),
    '',
    '**1. Probe overhead** (ms; sequential kubelet-style probes: a new connection each, `Connection: close`; ' +
      'the probing companion runs with the heap of a 128 MiB pod and a table with an HTTP, a TCP and a gRPC probe)',
    '',
    overhead(r),
    '',
    '**2. `/osm-healthcheck` throughput** (autocannon, keep-alive; open port → 200, refused port → 503)',
    '',
    throughput(r),
    '',
    '**3–4. Start-up (spawn → all ports answer HTTP) and memory** (idle: 1 s after start; after load: right ' +
      `after the runs above; then again ${r.settleSeconds} s later, once V8's memory reducer has given back what ` +
      'the load left)',
    '',
    memoryAndStartup(r),
    '',
    `Start-up of ${IMAGE} with a gRPC entry in its table (grpc-js loaded before it listens; heap flags included): ` +
      `${fmt(summary(r.grpcStartupMs), 0)} ms.`,
    '',
    '**5. Fairness**: liveness probes on the liveness port every 100 ms (timeout 1 s) while the healthcheck port ' +
      'takes a flood at concurrency 100',
    '',
    fairness(r),
  ].join('\n');
}

/**
 * `current` (BENCHMARKS.md's text) with `text` between the markers of Node `major`: replacing that major's block,
 * or for a first run on it, added after the other majors' blocks (else at the end). Runs on 20 and 24 coexist.
 */
export function placeResults(current, major, text) {
  const start = `<!-- bench:results node${major} -->`;
  const end = `<!-- /bench:results node${major} -->`;
  const block = `${start}\n${text}\n${end}`;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  if (from >= 0 && to > from) return `${current.slice(0, from)}${block}${current.slice(to + end.length)}`;
  const section = `### Node ${major}\n\n${block}`;
  const last = current.lastIndexOf('<!-- /bench:results node');
  if (last < 0) return `${current.trimEnd()}\n\n${section}\n`;
  const at = current.indexOf('-->', last) + '-->'.length;
  return `${current.slice(0, at)}\n\n${section}${current.slice(at)}`;
}

export function writeBenchmarks(text) {
  const current = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '# Benchmarks\n';
  writeFileSync(FILE, placeResults(current, process.versions.node.split('.')[0], text));
}
