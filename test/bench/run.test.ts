// `npm run bench` end to end at the smallest settings, so the benchmark keeps working between the runs that
// fill BENCHMARKS.md. Nothing here judges speed: the numbers of so short a run mean nothing.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

function runBench(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/run.mjs'], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bench/run.mjs', () => {
  it('measures every target against the floor and leaves BENCHMARKS.md alone for another build', async () => {
    const before = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8');
    const { code, stdout, stderr } = await runBench({
      BENCH_CLI: 'dist/cli.mjs',
      BENCH_ROUNDS: '1',
      BENCH_SECONDS: '0.2',
      BENCH_SETTLE_SECONDS: '0',
      BENCH_PROBES: '10',
      BENCH_FAIRNESS_SECONDS: '1',
    });
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
