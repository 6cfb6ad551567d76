// `npm run bench -- --recorder`: what recording a probe run for /metrics costs on the probe path
// (src/metrics/recorder.ts), against the floor of any such counting: a count, a sum and the in-flight gauge on
// plain fields, with no series lookup and no histogram slot. Both run the same calls in the same process, rounds
// interleaved, each after a warm-up that lets the JIT optimise it as on a companion that has run a while; the
// ratio is taken per round. Writes the table into the bench:recorder block of BENCHMARKS.md.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { summary } from './stats.mjs';

/** The target: recording costs at most this many times the floor (the ratio of one run, never a wall-clock limit). */
export const RECORDER_TARGET = 10;

/** Rounds and runs per round: BENCH_RECORDER_ROUNDS (7), BENCH_RECORDER_RUNS (200,000). */
export function recorderPlan(env = process.env) {
  const rounds = Number(env.BENCH_RECORDER_ROUNDS ?? 7);
  const runs = Number(env.BENCH_RECORDER_RUNS ?? 200_000);
  for (const [name, value] of [
    ['BENCH_RECORDER_ROUNDS', rounds],
    ['BENCH_RECORDER_RUNS', runs],
  ]) {
    if (!(Number.isInteger(value) && value >= 1))
      throw new Error(`${name} must be a whole number 1 or more, got ${env[name]}`);
  }
  return { rounds, runs };
}

/** The recorder and the table parser as the companion runs them: src/ bundled to plain JS. */
async function loadRecorder() {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bench-recorder-'));
  try {
    const out = await build({
      stdin: {
        contents: `export { Recorder } from './src/metrics/recorder.ts';\nexport { parseProbeTable } from './src/table/parse.ts';\n`,
        resolveDir: process.cwd(),
        loader: 'ts',
      },
      bundle: true,
      format: 'esm',
      platform: 'node',
      write: false,
    });
    const file = join(dir, 'recorder.mjs');
    writeFileSync(file, out.outputFiles[0].text);
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The least any counting of a probe run does: plain fields, no lookup, no bucket. */
class Floor {
  running = 0;
  success = 0;
  sumSeconds = 0;
  inFlight(_listener, delta) {
    this.running += delta;
  }
  probeRun(_probe, _outcome, _startedMs, seconds) {
    this.success++;
    this.sumSeconds += seconds;
  }
}

/** What the probers return, as serve hands it over: every 7th run a failure, counted under its reason. */
const SUCCESS = { verdict: 'success', status: 200, message: '' };
const TIMEOUT = { verdict: 'failure', status: 503, message: '', reason: 'timeout' };

/** ns per probe run over `runs` runs of what serve does around one probe: in flight, recorded, done. */
function timed(sink, probe, runs) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) {
    sink.inFlight('liveness', 1);
    sink.probeRun(probe, i % 7 === 0 ? TIMEOUT : SUCCESS, i, (i % 3000) / 1000);
    sink.inFlight('liveness', -1);
  }
  return Number(process.hrtime.bigint() - started) / runs;
}

export async function runRecorder({ rounds, runs }) {
  const { Recorder, parseProbeTable } = await loadRecorder();
  const table = parseProbeTable({
    liveness: { app: { httpGet: { port: 8080, path: '/live' }, timeoutSeconds: 3 } },
  });
  const recorder = new Recorder(table);
  // The recorder knows its series by the table's own entry objects, as serve hands them over.
  const entry = table.liveness.get('app');
  const floor = new Floor();
  timed(recorder, entry, runs);
  timed(floor, entry, runs);
  const results = { recorderNs: [], floorNs: [], ratios: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['recorder', 'floor'] : ['floor', 'recorder'];
    const ns = {};
    for (const name of order) ns[name] = timed(name === 'recorder' ? recorder : floor, entry, runs);
    results.recorderNs.push(ns.recorder);
    results.floorNs.push(ns.floor);
    results.ratios.push(ns.recorder / ns.floor);
  }
  return { rounds, runs, ...results };
}

const cell = (values, digits) => {
  const s = summary(values);
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
};

export function renderRecorder(r, info) {
  const ratio = summary(r.ratios).median;
  return [
    `Run ${info.date}: ${info.cpu}, ${info.memory}, Linux ${info.kernel}, Node ${info.node}, commit ${info.commit}; ` +
      `load average before ${info.loadBefore}, after ${info.loadNow()}; ${r.rounds} rounds of ${r.runs.toLocaleString('en')} probe runs each, interleaved. Cells: median over rounds (min–max).`,
    '',
    '| what | ns per probe run | vs floor |',
    '|---|---|---|',
    `| floor (a count, a sum, the in-flight gauge) | ${cell(r.floorNs, 1)} | 1 |`,
    `| the recorder (series lookup, verdict, a failure's reason every 7th run, first success, histogram slot, sum, in-flight gauge) | ${cell(r.recorderNs, 1)} | ${cell(r.ratios, 2)}× |`,
    '',
    `Target: the recorder ≤ ${RECORDER_TARGET}× the floor: ${ratio <= RECORDER_TARGET ? 'met' : '**missed**'}.`,
  ].join('\n');
}
