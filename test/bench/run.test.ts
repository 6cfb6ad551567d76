// `npm run bench` end to end at the smallest settings, so the benchmark keeps working between the runs that
// fill BENCHMARKS.md. Nothing here judges speed: the numbers of so short a run mean nothing.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT, runScript } from '../helpers/cli.js';

describe('bench/run.mjs', () => {
  it('measures every target against the floor and leaves BENCHMARKS.md alone for another build', async () => {
    const before = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8');
    const env = {
      BENCH_CLI: 'dist/cli.mjs',
      BENCH_ROUNDS: '1',
      BENCH_SECONDS: '0.2',
      BENCH_SETTLE_SECONDS: '0',
      BENCH_PROBES: '10',
      BENCH_FAIRNESS_SECONDS: '1',
    };
    const { code, stdout, stderr } = await runScript('bench/run.mjs', [], { env, timeoutMs: 170_000 });
    expect(code, stderr).toBe(0);
    for (const target of [
      'throughput open c10 ≥ 0.9× floor (same heap)',
      'throughput refused c100 ≥ 0.9× floor (same heap)',
      'start-up ≤ 1.3× floor',
      'RSS idle ≤ 1.15× floor',
      "RSS after load ≤ 1.3× floor's idle",
      'probe overhead HTTP p50 ≤ 1 ms',
      'probe overhead TCP p50 ≤ 1 ms',
      'probe overhead gRPC p50 ≤ 1 ms',
      'fairness: 0 failed liveness probes',
    ]) {
      expect(stdout).toContain(`| ${target} |`);
    }
    for (const server of ['floor', 'companion', 'companion@128Mi', 'floor@128Mi']) {
      expect(stdout).toMatch(new RegExp(`\\| open c100 \\| ${server} \\| \\d+`));
    }
    expect(stdout).not.toContain('NaN');
    expect(stderr).toContain('BENCHMARKS.md left as it was');
    expect(readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8')).toBe(before);
  }, 180_000);
});
