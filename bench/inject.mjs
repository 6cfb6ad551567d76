// `npm run bench -- --inject`: the built CLI's `inject -f FILE` (node dist/cli.mjs, as users run it) on one big
// map (1-16 MB) and on streams of 1,000-20,000 Deployments, against the yaml library's own parse and print of the
// same file (bench/yaml-baseline.mjs) run beside it: seconds, CPU seconds and peak RSS per size, as ratios to
// that baseline, and the targets. Writes the table into the bench:inject block of BENCHMARKS.md.

import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bigMap, deployments } from './inject-inputs.mjs';

const say = (text) => process.stderr.write(`${text}\n`);

/**
 * The sizes measured, each BENCH_INJECT_ROUNDS times (the median kept; by default 5 for the maps, whose
 * differences from size to size are a few tenths of a second, and 3 for the Deployments); BENCH_INJECT_SCALE
 * (e.g. 0.01) shrinks them all, for the test that keeps this working.
 */
export function injectPlan(env = process.env) {
  const given = env.BENCH_INJECT_ROUNDS;
  const rounds = Number(given ?? 3);
  if (!(Number.isInteger(rounds) && rounds >= 1)) {
    throw new Error(`BENCH_INJECT_ROUNDS must be a whole number 1 or more, got ${env.BENCH_INJECT_ROUNDS}`);
  }
  const scale = Number(env.BENCH_INJECT_SCALE ?? 1);
  if (!(scale > 0 && scale <= 1))
    throw new Error(`BENCH_INJECT_SCALE must be in (0, 1], got ${env.BENCH_INJECT_SCALE}`);
  const sizes = [
    ...[1, 2, 4, 8, 16].map((mb) => ({
      name: `one map, ${mb} MiB`,
      shape: 'map',
      make: () => bigMap(mb * scale),
    })),
    ...[1000, 5000, 10000, 20000].map((count) => ({
      name: `${count.toLocaleString('en')} Deployments`,
      shape: 'deployments',
      count,
      make: () => deployments(Math.max(1, Math.round(count * scale))),
    })),
  ];
  return sizes.map((size) => ({ ...size, rounds: given === undefined && size.shape === 'map' ? 5 : rounds }));
}

/** The run of median CPU time among `runs`. */
function median(runs) {
  const sorted = [...runs].sort((a, b) => a.cpuSeconds - b.cpuSeconds);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Runs `node ...args` with stdout to a file: wall seconds, CPU seconds, peak RSS (MiB), output bytes. */
function measure(dir, args) {
  const usageFile = join(dir, 'usage.json');
  const outFile = join(dir, 'out');
  const out = openSync(outFile, 'w');
  const began = performance.now();
  const child = spawnSync(process.execPath, ['--import', './bench/usage-at-exit.mjs', ...args], {
    stdio: ['ignore', out, 'pipe'],
    env: { ...process.env, BENCH_USAGE_FILE: usageFile },
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = (performance.now() - began) / 1000;
  closeSync(out);
  if (child.status !== 0)
    throw new Error(`${args.join(' ')}: exit ${child.status}: ${String(child.stderr).slice(0, 500)}`);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8'));
  return { seconds, ...usage, outputBytes: statSync(outFile).size };
}

/**
 * Each input of `plan` through the baseline and inject, and `startup`: inject on one Deployment, the fixed cost
 * (Node's start, loading the bundle) that the per-MiB figures leave out.
 */
export function runInject(plan, cli = 'dist/cli.mjs') {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bench-inject-'));
  const rows = [];
  let startup;
  try {
    const one = join(dir, 'one.yaml');
    writeFileSync(one, deployments(1));
    measure(dir, [cli, 'inject', '-f', one]);
    startup = measure(dir, [cli, 'inject', '-f', one]);
    for (const input of plan) {
      const file = join(dir, 'input.yaml');
      writeFileSync(file, input.make());
      const megabytes = statSync(file).size / 2 ** 20;
      say(`inject: ${input.name} (${megabytes.toFixed(1)} MiB)`);
      const baselines = [];
      const injects = [];
      // Interleaved, so a burst of load on the machine falls on both alike.
      for (let round = 0; round < input.rounds; round++) {
        baselines.push(measure(dir, ['bench/yaml-baseline.mjs', file]));
        injects.push(measure(dir, [cli, 'inject', '-f', file]));
      }
      rows.push({ ...input, megabytes, baseline: median(baselines), inject: median(injects) });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, startup };
}

const TARGETS = {
  oneMegabyteSeconds: 0.5,
  sixteenMegabytesSeconds: 5,
  twentyThousandSeconds: 15,
  twentyThousandRssMiB: 400,
  flatWithin: 2,
};

const f = (x, digits = 2) => x.toFixed(digits);
const table = (head, rows) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

/** The table and the targets, as Markdown. `info`: machineInfo() of report.mjs. */
export function renderInject({ rows, startup }, info) {
  const perMiB = (r) => Math.max(0, r.inject.cpuSeconds - startup.cpuSeconds) / r.megabytes;
  // What each MiB more costs, from one size of the same shape to the next: every fixed cost (Node's start, and
  // V8's warm-up on the first megabyte, which a one-Deployment start-up does not reach) cancels out.
  const added = (r) => {
    const before = rows[rows.indexOf(r) - 1];
    if (before === undefined || before.shape !== r.shape) return undefined;
    return (r.inject.cpuSeconds - before.inject.cpuSeconds) / (r.megabytes - before.megabytes);
  };
  const sizes = table(
    [
      'input',
      'MiB',
      'inject s (CPU s)',
      'CPU s per MiB past start-up',
      'CPU s per added MiB',
      'inject peak RSS MiB',
      'yaml s (CPU s)',
      'yaml peak RSS MiB',
      'CPU ratio',
      'RSS ratio',
    ],
    rows.map((r) => [
      r.name,
      f(r.megabytes, 1),
      `${f(r.inject.seconds)} (${f(r.inject.cpuSeconds)})`,
      f(perMiB(r), 3),
      added(r) === undefined ? '–' : f(added(r), 3),
      f(r.inject.peakRssMiB, 0),
      `${f(r.baseline.seconds)} (${f(r.baseline.cpuSeconds)})`,
      f(r.baseline.peakRssMiB, 0),
      `${f(r.inject.cpuSeconds / r.baseline.cpuSeconds)}×`,
      `${f(r.inject.peakRssMiB / r.baseline.peakRssMiB)}×`,
    ]),
  );
  const maps = rows.filter((r) => r.shape === 'map');
  const perMb = maps.map(perMiB);
  // A size that took no more CPU time than the start-up (a scaled-down run's noise) gives no ratio either.
  const spread = perMb.every((x) => x > 0) ? Math.max(...perMb) / Math.min(...perMb) : undefined;
  const steps = maps.map(added).filter((x) => x !== undefined);
  // A step that took no more CPU time (a scaled-down run's noise) gives no ratio.
  const stepSpread = steps.every((x) => x > 0) ? Math.max(...steps) / Math.min(...steps) : undefined;
  const first = maps[0];
  const last = maps.at(-1);
  const most = rows.filter((r) => r.shape === 'deployments').at(-1);
  // CPU seconds judge time: the wall clock of a shared machine counts the other processes too.
  const judged = [
    [
      `${first.name}: < ${TARGETS.oneMegabyteSeconds} s`,
      first.inject.cpuSeconds,
      first.inject.cpuSeconds < TARGETS.oneMegabyteSeconds,
    ],
    [
      `${last.name}: < ${TARGETS.sixteenMegabytesSeconds} s`,
      last.inject.cpuSeconds,
      last.inject.cpuSeconds < TARGETS.sixteenMegabytesSeconds,
    ],
    [
      `${most.name}: < ${TARGETS.twentyThousandSeconds} s`,
      most.inject.cpuSeconds,
      most.inject.cpuSeconds < TARGETS.twentyThousandSeconds,
    ],
    [
      `${most.name}: peak RSS < ${TARGETS.twentyThousandRssMiB} MiB`,
      most.inject.peakRssMiB,
      most.inject.peakRssMiB < TARGETS.twentyThousandRssMiB,
    ],
    [
      `one map: CPU s per MiB flat within ${TARGETS.flatWithin}× (max/min over ${maps.length} sizes)`,
      spread,
      spread !== undefined && spread <= TARGETS.flatWithin,
    ],
    [
      `one map: CPU s per added MiB flat within ${TARGETS.flatWithin}× (max/min over ${steps.length} steps)`,
      stepSpread,
      stepSpread !== undefined && stepSpread <= TARGETS.flatWithin,
    ],
  ];
  const targets = table(
    ['target', 'measured', 'verdict'],
    judged.map(([target, value, met]) => [
      target,
      value === undefined ? 'n/a' : f(value),
      met ? 'met' : '**missed**',
    ]),
  );
  return [
    `${info.date}, ${info.cpu}, ${info.memory}, Linux ${info.kernel}, Node ${info.node}, commit ${info.commit}, ` +
      `load average before ${info.loadBefore}, after ${info.loadNow()}`,
    '',
    `Start-up (inject of one Deployment): ${f(startup.seconds)} s, ${f(startup.cpuSeconds)} CPU s, peak RSS ${f(startup.peakRssMiB, 0)} MiB.`,
    '',
    sizes,
    '',
    targets,
  ].join('\n');
}
