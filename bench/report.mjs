// Turns the benchmark's raw numbers into Markdown tables with the targets, and writes them into
// BENCHMARKS.md between the bench:results (or bench:soak) markers of the Node major that ran (the prose around
// them is kept).

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

/** The ratio targets: each a bound on a median over rounds of a per-round ratio (or a difference, or a count). */
export const LIMITS = {
  throughput: 0.9,
  startup: 1.4,
  idleRss: 1.15,
  loadedRss: 1.05,
  overheadMs: 1,
};

/**
 * The targets, judged: one row per target, `{ target, image, plain, met }`, with the companion@128Mi and plain
 * companion cells as text and `met` undefined for a row shown for scale only. A memory limit does not change
 * start-up but the flags that stand in for it do, so start-up is judged on the plain runs; memory is judged on
 * companion@128Mi, the companion as it runs in a pod.
 */
export function targetRows(r) {
  const rows = [];
  const ratio = (name, values, base) => ratioSummary(values(name), base);
  const sameHeap = (values) => (name) => ratio(name, values, values(SAME_HEAP_FLOOR[name]));
  for (const config of r.configs) {
    const rps = (name) => pick(r.throughput[config][name], 'rps');
    const [image, plain] = [IMAGE, PLAIN].map(sameHeap(rps));
    rows.push({
      target: `throughput ${config} ≥ ${LIMITS.throughput}× floor (same heap)`,
      image: times(image),
      plain: times(plain),
      met: image.median >= LIMITS.throughput && plain.median >= LIMITS.throughput,
    });
  }
  const startup = ratio(PLAIN, (n) => r.startupMs[n], r.startupMs[FLOOR]);
  rows.push({
    target: `start-up ≤ ${LIMITS.startup}× floor`,
    image: `${times(startup)} (plain run)`,
    plain: times(startup),
    met: startup.median <= LIMITS.startup,
  });
  const idle = (n) => pick(r.idle[n], 'rss');
  const [imageIdle, plainIdle] = [IMAGE, PLAIN].map((n) => ratio(n, idle, idle(FLOOR)));
  rows.push({
    target: `RSS idle ≤ ${LIMITS.idleRss}× floor`,
    image: times(imageIdle),
    plain: times(plainIdle),
    met: imageIdle.median <= LIMITS.idleRss,
  });
  const [imageLoaded, plainLoaded] = [IMAGE, PLAIN].map(sameHeap((n) => pick(r.loaded[n], 'rss')));
  rows.push({
    target: `RSS after load ≤ ${LIMITS.loadedRss}× floor's after load (same heap)`,
    image: times(imageLoaded),
    plain: times(plainLoaded),
    met: imageLoaded.median <= LIMITS.loadedRss,
  });
  // For scale, not judged: both once V8's memory reducer has had time to give back what the load left.
  const [imageSettled, plainSettled] = [IMAGE, PLAIN].map(sameHeap((n) => pick(r.settled[n], 'rss')));
  rows.push({
    target: `(not judged) RSS ${r.settleSeconds} s after load vs floor's then (same heap)`,
    image: times(imageSettled),
    plain: times(plainSettled),
    met: undefined,
  });
  for (const kind of Object.keys(r.overhead)) {
    const extra = overheadOf(r, kind);
    rows.push({
      target: `probe overhead ${kind} p50 ≤ ${LIMITS.overheadMs} ms`,
      image: `${fmt(extra, 2)} ms`,
      plain: '—',
      met: extra.median <= LIMITS.overheadMs,
    });
  }
  const failures = r.fairness.failures.length;
  rows.push({
    target: 'fairness: 0 failed liveness probes',
    image: `${failures} of ${r.fairness.latencies.length}`,
    plain: '—',
    met: failures === 0,
  });
  return rows;
}

function targets(r) {
  const rows = targetRows(r).map((row) => [
    row.target,
    row.image,
    row.plain,
    row.met === undefined ? '—' : verdict(row.met),
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
    SAME_HEAP_FLOOR[name] === undefined
      ? '1'
      : times(ratioSummary(pick(r.loaded[name], 'rss'), pick(r.loaded[SAME_HEAP_FLOOR[name]], 'rss'))),
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
    'vs same-heap floor after load',
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
      `${r.probes} probes per overhead sample, ${i.elapsedSeconds} s in all; \`@128Mi\` servers get a pod's heap ` +
      `from ${i.podHeap ?? 'V8 flags'}. Cells: median over rounds (min–max); ` +
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
 * `current` (BENCHMARKS.md's text) with `text` between the markers of `kind` (`results`, `soak`) for Node `major`:
 * replacing that block, or for a first run on that major, added after the other majors' blocks of that kind (else
 * at the end). Runs on 20 and 24 coexist, and a soak run leaves the results alone.
 */
export function placeResults(current, major, text, kind = 'results') {
  const start = `<!-- bench:${kind} node${major} -->`;
  const end = `<!-- /bench:${kind} node${major} -->`;
  const block = `${start}\n${text}\n${end}`;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  if (from >= 0 && to > from) return `${current.slice(0, from)}${block}${current.slice(to + end.length)}`;
  const section = `### Node ${major}\n\n${block}`;
  const last = current.lastIndexOf(`<!-- /bench:${kind} node`);
  if (last < 0) return `${current.trimEnd()}\n\n${section}\n`;
  const at = current.indexOf('-->', last) + '-->'.length;
  return `${current.slice(0, at)}\n\n${section}${current.slice(at)}`;
}

/** Writes `text` into the `kind` block of this Node major in BENCHMARKS.md, or in the file BENCH_FILE names. */
export function writeBenchmarks(text, kind = 'results') {
  const file = process.env.BENCH_FILE ?? FILE;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  writeFileSync(file, placeResults(current, process.versions.node.split('.')[0], text, kind));
}
