// `npm run bench` end to end at the smallest settings, so the benchmark keeps working between the runs that
// fill BENCHMARKS.md. Nothing here judges speed: the numbers of so short a run mean nothing. Even so short a run
// takes two minutes, so its parts run with OSM_HC_HEAVY=1 or in CI (helpers/system-tools.ts heavy()); the tests of
// bench/*.mjs on tiny inputs (report, recorder, inject, soak, webhook-cluster) run in every `npm test`.

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { placeResults } from '../../bench/report.mjs';
import { COMPANION_RESOURCES } from '../../src/rewrite/resources/defaults.js';
import { ROOT, runScript } from '../helpers/cli.js';
import { heavy, skipWithout } from '../helpers/system-tools.js';
import { LAB_READY, warnUnlessRoot } from '../init/lab.js';

const SKIP = skipWithout(
  'bench/run.mjs end to end: --ratios, --soak 12, --fleet --contention (about 2 min)',
  [heavy('benchmark runs')],
);
if (!SKIP) warnUnlessRoot('the fleet and contention benchmark test');

describe('bench/run.mjs', () => {
  it.skipIf(SKIP)(
    'measures every target against the floor and leaves BENCHMARKS.md alone for another build',
    async () => {
      const before = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8');
      const env = {
        BENCH_CLI: 'dist/cli.mjs',
        BENCH_ROUNDS: '1',
        BENCH_SECONDS: '0.2',
        BENCH_SETTLE_SECONDS: '0',
        BENCH_PROBES: '10',
        BENCH_FAIRNESS_SECONDS: '1',
      };
      const { code, stdout, stderr } = await runScript('bench/run.mjs', ['--ratios'], {
        env,
        timeoutMs: 170_000,
      });
      expect(code, stderr).toBe(0);
      for (const target of [
        'throughput open c10 ≥ 0.9× floor (same heap)',
        'throughput refused c100 ≥ 0.9× floor (same heap)',
        'start-up ≤ 1.4× floor',
        'RSS idle ≤ 1.15× floor',
        "RSS after load ≤ 1.05× floor's after load (same heap)",
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
    },
    180_000,
  );

  it.skipIf(SKIP)(
    'soaks one companion under kubelet probes and floods, and writes a Soak block where BENCH_FILE says',
    async () => {
      const before = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8');
      const dir = mkdtempSync(join(tmpdir(), 'osm-hc-soak-'));
      try {
        const copy = join(dir, 'BENCHMARKS.md');
        copyFileSync(`${ROOT}BENCHMARKS.md`, copy);
        const env = {
          BENCH_FILE: copy,
          BENCH_SOAK_WARMUP_SECONDS: '3',
          BENCH_SOAK_FLOOD_EVERY_SECONDS: '3',
          BENCH_SOAK_FLOOD_SECONDS: '1',
          BENCH_SOAK_SAMPLE_SECONDS: '0.5',
        };
        const { code, stdout, stderr } = await runScript('bench/run.mjs', ['--soak', '12'], {
          env,
          timeoutMs: 50_000,
        });
        expect(code, stderr).toBe(0);
        const major = process.versions.node.split('.')[0];
        const written = readFileSync(copy, 'utf8');
        const start = written.indexOf(`<!-- bench:soak node${major} -->`);
        const end = written.indexOf(`<!-- /bench:soak node${major} -->`);
        expect(start).toBeGreaterThanOrEqual(0);
        const block = written.slice(start, end);
        expect(block).toContain(stdout.trim());
        expect(block).toMatch(/\*\*Verdict: (flat|not flat|not judged)\*\*/);
        // Samples in every interval: an RSS low–high and a descriptor count in each of the four rows.
        const rows = block.match(
          /^\| (0–3 \(warm-up\)|3–6|6–9|9–12) \| \d+\.\d(–\d+\.\d)? \| .+ \| \d+(–\d+)? \|/gm,
        );
        expect(rows, block).toHaveLength(4);
        // V8's heap comes from the companion's /metrics or is said to be unavailable, never made up.
        expect(block).toMatch(
          /\| V8 heap used MiB \| (\d+\.\d \| \d+\.\d|unavailable: GET \/metrics → [^|]+ \| —) \|/,
        );
        // Kubelet probes on all four ports, counted. How many failed is the soak verdict's to judge, not this test's:
        // on a busy machine a probe of 1 s may be late without anything being wrong.
        const probes = /\| failed kubelet probes, all four ports \| — \| (\d+) of (\d+) \|/.exec(block);
        expect(probes, block).not.toBeNull();
        expect(Number(probes?.[2])).toBeGreaterThanOrEqual(4 * 10);
        expect(Number(probes?.[1])).toBeLessThanOrEqual(Number(probes?.[2]));
        // Everything it started is gone: the companion it names first.
        const pid = Number(/pid (\d+)/.exec(stderr)?.[1]);
        expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
        // Only that block changed, and the real file not at all.
        expect(written).toBe(placeResults(before, major, stdout.trim(), 'soak'));
        expect(readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8')).toBe(before);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it.skipIf(SKIP || !LAB_READY)(
    'runs the fleet (K pods in network namespaces) and the contention table, and writes both blocks where BENCH_FILE says',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'osm-hc-fleet-'));
      try {
        const copy = join(dir, 'BENCHMARKS.md');
        copyFileSync(`${ROOT}BENCHMARKS.md`, copy);
        const env = {
          BENCH_FILE: copy,
          BENCH_FLEET_PODS: '2',
          BENCH_FLEET_RUNS: '1',
          BENCH_FLEET_ROUNDS: '3',
          BENCH_BURST_SECONDS: '1',
          BENCH_CONTENTION_ROUNDS: '1',
          BENCH_CONTENTION_SECONDS: '1',
          // inject's own request among the candidates, whatever it is now, so its row is marked.
          BENCH_CONTENTION_REQUESTS: [...new Set(['10m', '100m', COMPANION_RESOURCES.requests.cpu])].join(
            ',',
          ),
        };
        const args = ['--fleet', '--contention', '--node', process.execPath];
        const { code, stdout, stderr } = await runScript('bench/run.mjs', args, { env, timeoutMs: 110_000 });
        expect(code, stderr).toBe(0);
        const major = process.versions.node.split('.')[0];
        const written = readFileSync(copy, 'utf8');
        for (const kind of ['fleet', 'contention']) {
          expect(written).toContain(`<!-- bench:${kind} node${major} -->`);
        }
        for (const row of ['idle `node -e`', 'raw node:http', 'companion (`serve`)']) {
          expect(stdout).toMatch(
            new RegExp(`\\| ${row.replace(/[()`]/g, '.')}[^|]* \\| \\d+\\.\\d \\| \\d+\\.\\d \\|`),
          );
        }
        // Each request's weight as kubelet (v1 shares) or runc (v2 weight) writes it; inject's own request marked.
        expect(stdout).toMatch(/\| 10m( \(inject\))? \| cpu\.(shares 10|weight 1) \| \d+ \|/);
        expect(stdout).toMatch(/\| 100m( \(inject\))? \| cpu\.(shares 102|weight 4) \| \d+ \|/);
        expect(stdout).toMatch(/\| \d+m \(inject\) \|/);
        expect(stdout).toMatch(
          /\*\*This run calls for\*\* a memory request of \d+Mi .* and a limit of \d+Mi/,
        );
        expect(stdout).toMatch(/\*\*Worst burst\*\*.*OOM kills \d+/);
        expect(stdout).not.toContain('NaN');
        // Every namespace it made is gone.
        const { stdout: left } = await execa('ip', ['netns', 'list']);
        expect(left).not.toMatch(/ohc-\d+-(fleet|burst|cpu)/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );

  it('refuses a bad --soak at once, naming it', async () => {
    const { code, stderr } = await runScript('bench/run.mjs', ['--soak', '0']);
    expect(code).toBe(2);
    expect(stderr).toContain('bench/run.mjs: --soak: must be a number of seconds above 0');
  });
});
