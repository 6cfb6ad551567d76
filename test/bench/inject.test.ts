// `npm run bench -- --inject` end to end at a hundredth of its sizes, so the benchmark keeps working between the
// runs that fill BENCHMARKS.md. Nothing here judges speed: the numbers of so short a run mean nothing.

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runScript } from '../helpers/cli.js';

describe('bench/run.mjs --inject', () => {
  it('measures inject and the yaml baseline at every size and writes an inject block where BENCH_FILE says', async () => {
    const before = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8');
    const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bench-inject-test-'));
    try {
      const copy = join(dir, 'BENCHMARKS.md');
      copyFileSync(`${ROOT}BENCHMARKS.md`, copy);
      const { code, stdout, stderr } = await runScript('bench/run.mjs', ['--inject'], {
        env: { BENCH_FILE: copy, BENCH_INJECT_SCALE: '0.01', BENCH_INJECT_ROUNDS: '1' },
        timeoutMs: 170_000,
      });
      expect(code, stderr).toBe(0);
      for (const size of ['1', '2', '4', '8', '16'])
        expect(stdout).toMatch(new RegExp(`\\| one map, ${size} MiB \\| `));
      for (const count of ['1,000', '5,000', '10,000', '20,000']) {
        expect(stdout).toMatch(
          new RegExp(`\\| ${count} Deployments \\| [\\d.]+ \\| [\\d.]+ \\([\\d.]+\\) \\|`),
        );
      }
      for (const target of [
        'one map, 1 MiB: < 0.5 s',
        'one map, 16 MiB: < 5 s',
        '20,000 Deployments: < 15 s',
        '20,000 Deployments: peak RSS < 400 MiB',
        'one map: CPU s per MiB flat within 2×',
        'one map: CPU s per added MiB flat within 2×',
      ]) {
        expect(stdout).toContain(`| ${target}`);
      }
      expect(stdout).not.toMatch(/NaN|Infinity/);
      const major = process.versions.node.split('.')[0];
      const written = readFileSync(copy, 'utf8');
      const start = written.indexOf(`<!-- bench:inject node${major} -->`);
      const end = written.indexOf(`<!-- /bench:inject node${major} -->`);
      expect(start).toBeGreaterThan(written.indexOf('## Inject: time and peak memory by input size'));
      expect(written.slice(start, end)).toContain(stdout.trim());
      expect(readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8')).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
