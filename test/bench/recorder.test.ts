// `npm run bench -- --recorder` end to end at a few rounds of a few runs, so the benchmark that judges the
// recorder's cost keeps working between the runs that fill BENCHMARKS.md. Nothing here judges speed: the numbers
// of so short a run mean nothing, and a unit test's clock on a busy machine means less.

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recorderPlan } from '../../bench/recorder.mjs';
import { ROOT, runScript } from '../helpers/cli.js';

describe('bench/run.mjs --recorder', () => {
  it('times the recorder and its floor in the same rounds and writes a recorder block where BENCH_FILE says', async () => {
    const before = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8');
    const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bench-recorder-test-'));
    try {
      const copy = join(dir, 'BENCHMARKS.md');
      copyFileSync(`${ROOT}BENCHMARKS.md`, copy);
      const { code, stdout, stderr } = await runScript('bench/run.mjs', ['--recorder'], {
        env: { BENCH_FILE: copy, BENCH_RECORDER_ROUNDS: '3', BENCH_RECORDER_RUNS: '1000' },
        timeoutMs: 60_000,
      });
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(
        /\| floor \(a count, a sum, the in-flight gauge\) \| [\d.]+ \([\d.]+–[\d.]+\) \| 1 \|/,
      );
      expect(stdout).toMatch(
        /\| the recorder \([^)]*\) \| [\d.]+ \([\d.]+–[\d.]+\) \| [\d.]+ \([\d.]+–[\d.]+\)× \|/,
      );
      expect(stdout).toMatch(/^Target: the recorder ≤ 10× the floor: (met|\*\*missed\*\*)\.$/m);
      expect(stdout).toContain('3 rounds of 1,000 probe runs each');
      expect(stdout).not.toMatch(/NaN|Infinity/);
      const written = readFileSync(copy, 'utf8');
      const major = process.versions.node.split('.')[0];
      expect(written).toContain(
        `<!-- bench:recorder node${major} -->\n${stdout.trimEnd()}\n<!-- /bench:recorder`,
      );
      expect(readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8')).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    {
      name: 'no rounds',
      env: { BENCH_RECORDER_ROUNDS: '0' },
      message: /^BENCH_RECORDER_ROUNDS must be a whole number 1 or more, got 0$/,
    },
    {
      name: 'runs not a number',
      env: { BENCH_RECORDER_RUNS: 'lots' },
      message: /^BENCH_RECORDER_RUNS must be a whole number 1 or more, got lots$/,
    },
  ])('refuses $name', ({ env, message }) => {
    expect(() => recorderPlan(env)).toThrow(message);
  });
});
