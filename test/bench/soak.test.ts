// The soak's plan, its heap scrape and its verdict: pure functions, tested with tables (the run itself is in
// run.test.ts).

import { describe, expect, it } from 'vitest';
import { heapUsedMiB } from '../../bench/clients.mjs';
import { soakOptions } from '../../bench/soak-options.mjs';
import { renderSoak, SOAK_LIMITS, soakChecks } from '../../bench/soak-report.mjs';

describe('soakOptions', () => {
  const defaults = {
    warmupSeconds: 120,
    sampleSeconds: 5,
    floodEverySeconds: 60,
    floodSeconds: 5,
    probePeriodSeconds: 1,
  };

  it.each([
    { name: 'ten minutes with the defaults', soak: '600', env: {}, want: { seconds: 600, ...defaults } },
    { name: 'the shortest the defaults allow', soak: '240', env: {}, want: { seconds: 240, ...defaults } },
    {
      name: "the end-to-end test's small knobs",
      soak: '12',
      env: {
        BENCH_SOAK_WARMUP_SECONDS: '3',
        BENCH_SOAK_FLOOD_EVERY_SECONDS: '3',
        BENCH_SOAK_FLOOD_SECONDS: '1',
        BENCH_SOAK_SAMPLE_SECONDS: '0.5',
        BENCH_SOAK_PROBE_PERIOD_SECONDS: '1',
      },
      want: {
        seconds: 12,
        warmupSeconds: 3,
        sampleSeconds: 0.5,
        floodEverySeconds: 3,
        floodSeconds: 1,
        probePeriodSeconds: 1,
      },
    },
  ])('$name', ({ soak, env, want }) => {
    expect(soakOptions(soak, env)).toEqual(want);
  });

  it.each([
    { name: 'not a number', soak: 'ten', env: {}, error: '--soak: must be a number of seconds above 0' },
    { name: 'zero', soak: '0', env: {}, error: '--soak: must be a number of seconds above 0' },
    { name: 'negative', soak: '-600', env: {}, error: '--soak: must be a number of seconds above 0' },
    { name: 'more than a day', soak: '86401', env: {}, error: 'at most 86400, got "86401"' },
    { name: 'an exponent', soak: '6e2', env: {}, error: '--soak: must be a number of seconds above 0' },
    { name: 'missing', soak: undefined, env: {}, error: '--soak: must be a number of seconds above 0' },
    {
      name: 'too short for two intervals after the warm-up',
      soak: '239',
      env: {},
      error: '--soak: 239 s leaves fewer than two BENCH_SOAK_FLOOD_EVERY_SECONDS (60 s) intervals',
    },
    {
      name: 'a knob that is not a number',
      soak: '600',
      env: { BENCH_SOAK_SAMPLE_SECONDS: 'often' },
      error: 'BENCH_SOAK_SAMPLE_SECONDS: must be a number of seconds above 0 and at most 86400, got "often"',
    },
    {
      name: 'an empty knob',
      soak: '600',
      env: { BENCH_SOAK_WARMUP_SECONDS: '' },
      error: 'BENCH_SOAK_WARMUP_SECONDS: must be a number',
    },
    {
      name: 'a flood as long as its interval',
      soak: '600',
      env: { BENCH_SOAK_FLOOD_SECONDS: '60' },
      error: 'BENCH_SOAK_FLOOD_SECONDS: must be shorter than BENCH_SOAK_FLOOD_EVERY_SECONDS (60), got 60',
    },
    {
      name: 'fewer than two samples an interval',
      soak: '600',
      env: { BENCH_SOAK_SAMPLE_SECONDS: '31' },
      error: 'BENCH_SOAK_SAMPLE_SECONDS: must be at most half of BENCH_SOAK_FLOOD_EVERY_SECONDS (60), got 31',
    },
  ])('refuses $name', ({ soak, env, error }) => {
    expect(() => soakOptions(soak, env)).toThrow(error);
  });
});

describe('heapUsedMiB (from /metrics)', () => {
  const help = '# HELP nodejs_heap_size_used_bytes Process heap size used from Node.js in bytes.\n';
  const type = '# TYPE nodejs_heap_size_used_bytes gauge\n';
  it.each([
    { name: "prom-client's sample", text: `${help}${type}nodejs_heap_size_used_bytes 10485760\n`, want: 10 },
    { name: 'with default labels', text: 'nodejs_heap_size_used_bytes{pod="a"} 2097152\n', want: 2 },
    {
      name: 'among other series',
      text: 'process_open_fds 23\nnodejs_heap_size_total_bytes 9\nnodejs_heap_size_used_bytes 1048576\n',
      want: 1,
    },
    { name: 'only a longer name', text: 'nodejs_heap_size_used_bytes_total 1048576\n', want: null },
    { name: 'only its HELP and TYPE', text: `${help}${type}`, want: null },
    { name: 'not a number', text: 'nodejs_heap_size_used_bytes NaN\n', want: null },
    { name: 'nothing', text: '', want: null },
  ])('$name', ({ text, want }) => {
    expect(heapUsedMiB(text)).toBe(want);
  });
});

describe('soakChecks and renderSoak', () => {
  const options = {
    seconds: 300,
    warmupSeconds: 60,
    sampleSeconds: 5,
    floodEverySeconds: 60,
    floodSeconds: 5,
    probePeriodSeconds: 1,
  };
  interface Growth {
    rss?: number;
    heapUsed?: number | null;
    fds?: number;
    failures?: number;
  }
  /** A soak whose measures grow by the given amount per minute, with a flood's bump early in each minute. */
  function soakResult(growth: Growth) {
    const samples = [];
    for (let t = 0; t < options.seconds; t += options.sampleSeconds) {
      const minutes = t / 60;
      const bump = t % 60 < 10 ? 1 : 0;
      samples.push({
        t,
        rss: 60 + (growth.rss ?? 0) * minutes + 8 * bump,
        anon: 20 + 8 * bump,
        heapUsed: growth.heapUsed === null ? null : 6 + (growth.heapUsed ?? 0) * minutes + 4 * bump,
        fds: Math.round(23 + (growth.fds ?? 0) * minutes) + 100 * bump,
      });
    }
    const failures = growth.failures ?? 0;
    return {
      info: {
        date: '2026-01-01T00:00:00Z',
        cpu: 'cpu × 2',
        memory: '24 GiB',
        kernel: '6',
        node: 'v20.20.2',
        commit: 'abc1234',
        cli: 'dist/cli.mjs',
        pinned: true,
        loadBefore: '1.00 1.00 1.00',
        loadAfter: '1.00 1.00 1.00',
      },
      options,
      companion: 'companion@128Mi (gRPC table)',
      floodConnections: 100,
      probeTimeoutMs: 1000,
      samples,
      floods: [0, 60, 120, 180, 240].map((t) => ({ t, rps: 7000, count: 35000, odd: 0 })),
      metricsOutcome: growth.heapUsed === null ? 404 : 200,
      probes: ['liveness', 'readiness', 'startup', 'healthcheck'].map((role, i) => ({
        role,
        count: 300,
        failures: i === 0 ? Array(failures).fill('timeout') : [],
        failedAt: i === 0 ? Array(failures).fill(130) : [],
        latencies: Array(300).fill(2),
      })),
    };
  }

  it.each([
    { name: 'nothing grows: flat', growth: {}, verdict: 'flat', missed: [] },
    {
      name: 'heap used growing at its limit: flat',
      growth: { heapUsed: SOAK_LIMITS.heapUsed },
      verdict: 'flat',
      missed: [],
    },
    {
      name: 'heap used growing faster than its limit: not flat',
      growth: { heapUsed: 2 * SOAK_LIMITS.heapUsed },
      verdict: 'not flat',
      missed: ['heapUsed'],
    },
    { name: 'one descriptor a minute: not flat', growth: { fds: 1 }, verdict: 'not flat', missed: ['fds'] },
    {
      name: 'RSS growing 1 MiB a minute: not flat',
      growth: { rss: 1 },
      verdict: 'not flat',
      missed: ['rss'],
    },
    { name: 'one failed probe: not flat', growth: { failures: 1 }, verdict: 'not flat', missed: [] },
    {
      name: 'no heap from /metrics: not judged',
      growth: { heapUsed: null },
      verdict: 'not judged',
      missed: [],
    },
  ])('$name', ({ growth, verdict, missed }) => {
    const checks = soakChecks(soakResult(growth));
    expect(checks.verdict).toBe(verdict);
    expect(
      checks.fits.filter((f: { check?: string }) => f.check === 'missed').map((f: { key: string }) => f.key),
    ).toEqual(missed);
  });

  it('fits the lows after warm-up, so the floods do not count', () => {
    const { fits } = soakChecks(soakResult({ rss: 0.3 }));
    const rss = fits.find((f: { key: string }) => f.key === 'rss');
    expect(rss?.slope).toBeCloseTo(0.3, 10);
    // The first window after the 60 s warm-up is [60, 120): its low is at 70 s, after its flood.
    expect(rss?.first).toBeCloseTo(60 + 0.3 * (70 / 60), 10);
  });

  it('says what is unavailable and why, with one row per interval', () => {
    const text = renderSoak(soakResult({ heapUsed: null, failures: 2 }));
    expect(text).toContain('**Verdict: not flat**');
    expect(text).toContain('| V8 heap used MiB | unavailable: GET /metrics → 404 |');
    expect(text).toContain('| failed kubelet probes, all four ports | — | 2 of 1200 |');
    expect(text).toContain('liveness 2 of 300 (p99 2.0 ms)');
    expect(text).toMatch(/\| 0–60 \(warm-up\) \| 60\.0–68\.0 \| — \| 23–123 \| 20\.0–28\.0 \| 0 \| 7000 \|/);
    expect(text).toMatch(/\| 120–180 \| 60\.0–68\.0 \| — \| 23–123 \| 20\.0–28\.0 \| 2 \| 7000 \|/);
    expect(text.match(/^\| \d+–\d+/gm)).toHaveLength(5);
  });
});
