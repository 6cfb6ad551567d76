// What `--fleet` and `--contention` do, from `--node` and the BENCH_FLEET_*, BENCH_BURST_* and BENCH_CONTENTION_*
// knobs: checked before anything starts, so a bad value is refused at once, naming the flag or variable.

import { existsSync } from 'node:fs';
import { parseMilliCpu } from './kube-resources.mjs';

const KNOBS = {
  k: ['BENCH_FLEET_PODS', 8],
  runs: ['BENCH_FLEET_RUNS', 3],
  rounds: ['BENCH_FLEET_ROUNDS', 50],
  periodMs: ['BENCH_FLEET_PERIOD_MS', 100],
  burstSeconds: ['BENCH_BURST_SECONDS', 10],
  contentionRounds: ['BENCH_CONTENTION_ROUNDS', 2],
  contentionSeconds: ['BENCH_CONTENTION_SECONDS', 10],
  contentionPeriodMs: ['BENCH_CONTENTION_PERIOD_MS', 1000],
};

/** The plan from `--node` paths and the BENCH_FLEET_* / BENCH_BURST_* / BENCH_CONTENTION_* knobs; throws naming one. */
export function fleetOptions(nodes, env) {
  /** @type {Record<string, any>} */
  const plan = { nodes };
  for (const [key, [name, fallback]] of Object.entries(KNOBS)) {
    const text = env[name];
    const value = text === undefined ? fallback : Number(text);
    if (!(Number.isInteger(value) && value > 0))
      throw new Error(`${name}: must be a whole number above 0, got "${text}"`);
    plan[key] = value;
  }
  const candidates = env.BENCH_CONTENTION_REQUESTS ?? '5m,10m,20m,50m,100m,200m';
  plan.candidates = candidates.split(',').map((c) => {
    try {
      return parseMilliCpu(c);
    } catch (err) {
      throw new Error(`BENCH_CONTENTION_REQUESTS: ${err.message}`);
    }
  });
  for (const path of nodes) if (!existsSync(path)) throw new Error(`--node: no such file: ${path}`);
  return plan;
}
