// The bench's arithmetic and where it writes its results: pure functions, tested with tables.

import { describe, expect, it } from 'vitest';
import { placeResults, targetRows } from '../../bench/report.mjs';
import {
  check,
  formatSummary,
  percentile,
  ratioSummary,
  slope,
  soakVerdict,
  summary,
  windowLows,
} from '../../bench/stats.mjs';

describe('percentile (nearest rank)', () => {
  it.each([
    { samples: [5, 1, 3], q: 0.5, want: 3 },
    { samples: [1, 2, 3, 4], q: 0.5, want: 2 },
    { samples: [1, 2, 3, 4], q: 0.99, want: 4 },
    { samples: [7], q: 0, want: 7 },
    { samples: [], q: 0.5, want: Number.NaN },
  ])('$samples at $q is $want', ({ samples, q, want }) => {
    expect(percentile(samples, q)).toBe(want);
  });
});

describe('summary and ratios across rounds', () => {
  it('takes the median (mean of the middle two for an even count) with min and max', () => {
    expect(summary([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, n: 3 });
    expect(summary([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4, n: 4 });
  });

  it('pairs rounds before dividing, so a slow round on both sides cancels out', () => {
    // Per round 0.9, 1.0, 0.8: a ratio of medians would say 1.0 (900 / 900).
    expect(ratioSummary([900, 500, 1200], [1000, 500, 1500])).toEqual({
      median: 0.9,
      min: 0.8,
      max: 1,
      n: 3,
    });
  });

  it('formats median (min–max)', () => {
    expect(formatSummary({ median: 1.234, min: 1, max: 2.5, n: 3 }, 2)).toBe('1.23 (1.00–2.50)');
  });
});

describe('placeResults', () => {
  const doc = [
    '# Benchmarks',
    '',
    '### Node 20',
    '',
    '<!-- bench:results node20 -->',
    'old 20',
    '<!-- /bench:results node20 -->',
    '',
    '## Before and after',
    '',
  ].join('\n');

  it("replaces only that major's block and keeps the prose around it", () => {
    const next = placeResults(doc, '20', 'new 20');
    expect(next).toBe(doc.replace('old 20', 'new 20'));
  });

  it("adds a first run on another major after the other majors' blocks, before the prose", () => {
    const next = placeResults(doc, '24', 'new 24');
    expect(next).toContain(
      '<!-- /bench:results node20 -->\n\n### Node 24\n\n<!-- bench:results node24 -->\nnew 24\n<!-- /bench:results node24 -->\n\n## Before and after',
    );
    expect(placeResults(next, '24', 'newer 24')).toBe(next.replace('new 24', 'newer 24'));
  });

  it('appends to a file without any block', () => {
    expect(placeResults('# Benchmarks\n', '20', 'x')).toBe(
      '# Benchmarks\n\n### Node 20\n\n<!-- bench:results node20 -->\nx\n<!-- /bench:results node20 -->\n',
    );
  });

  it('places a soak block beside the results, and a soak run leaves the results alone', () => {
    const withSoak = placeResults(doc, '20', 'soak 20', 'soak');
    expect(withSoak).toContain('<!-- bench:results node20 -->\nold 20\n<!-- /bench:results node20 -->');
    expect(withSoak).toContain('<!-- bench:soak node20 -->\nsoak 20\n<!-- /bench:soak node20 -->');
    const soak24 = placeResults(withSoak, '24', 'soak 24', 'soak');
    expect(soak24).toContain('<!-- /bench:soak node20 -->\n\n### Node 24\n\n<!-- bench:soak node24 -->');
    expect(placeResults(soak24, '20', 'new 20')).toBe(soak24.replace('old 20', 'new 20'));
    expect(placeResults(soak24, '20', 'soak again', 'soak')).toBe(soak24.replace('soak 20', 'soak again'));
  });
});

describe('targets (issue 11)', () => {
  const CONFIGS = ['open c10', 'open c100', 'refused c10', 'refused c100'];
  const NAMES = ['floor', 'companion', 'companion@128Mi', 'floor@128Mi'] as const;
  type Name = (typeof NAMES)[number];
  type PerName = Record<Name, number>;
  const same = (x: number): PerName => ({ floor: x, companion: x, 'companion@128Mi': x, 'floor@128Mi': x });

  /** Five identical rounds: every server at `base` unless a case says otherwise. */
  interface Run {
    rps: PerName;
    startup: PerName;
    idle: PerName;
    loaded: PerName;
    httpVia: number;
    failures: number;
  }
  const base = (): Run => ({
    rps: same(1000),
    startup: same(100),
    idle: same(50),
    loaded: same(60),
    httpVia: 0.5,
    failures: 0,
  });
  function results(run: Run) {
    const rounds = <T>(x: T) => [x, x, x, x, x];
    const each = <T>(f: (name: Name) => T) => Object.fromEntries(NAMES.map((n) => [n, rounds(f(n))]));
    return {
      configs: CONFIGS,
      throughput: Object.fromEntries(CONFIGS.map((c) => [c, each((n) => ({ rps: run.rps[n] }))])),
      startupMs: each((n) => run.startup[n]),
      idle: each((n) => ({ rss: run.idle[n] })),
      loaded: each((n) => ({ rss: run.loaded[n] })),
      settled: each((n) => ({ rss: run.loaded[n] })),
      settleSeconds: 10,
      overhead: { HTTP: { direct: rounds({ p50: 0.5 }), via: rounds({ p50: run.httpVia }) } },
      fairness: { failures: Array(run.failures).fill('timeout'), latencies: Array(200).fill(30) },
    };
  }
  const with_ = (change: (r: Run) => void) => {
    const run = base();
    change(run);
    return run;
  };

  it('a companion no worse than the floor meets every target', () => {
    const rows = targetRows(results(base()));
    expect(rows.filter((row: { met?: boolean }) => row.met === false)).toEqual([]);
    expect(rows).toHaveLength(CONFIGS.length + 3 + 1 + 1 + 1);
  });

  it.each([
    {
      name: 'start-up at 1.4× the floor is met',
      run: with_((r) => Object.assign(r.startup, { companion: 140 })),
      target: 'start-up ≤ 1.4× floor',
      met: true,
    },
    {
      name: 'start-up at 1.41× the floor is missed',
      run: with_((r) => Object.assign(r.startup, { companion: 141 })),
      target: 'start-up ≤ 1.4× floor',
      met: false,
    },
    {
      name: 'start-up of companion@128Mi is not judged (its heap flags cost start-up a cgroup does not)',
      run: with_((r) => Object.assign(r.startup, { 'companion@128Mi': 300 })),
      target: 'start-up ≤ 1.4× floor',
      met: true,
    },
    {
      name: 'RSS idle at 1.15× the floor is met',
      run: with_((r) => Object.assign(r.idle, { 'companion@128Mi': 57.5 })),
      target: 'RSS idle ≤ 1.15× floor',
      met: true,
    },
    {
      name: 'RSS idle at 1.16× the floor is missed',
      run: with_((r) => Object.assign(r.idle, { 'companion@128Mi': 58 })),
      target: 'RSS idle ≤ 1.15× floor',
      met: false,
    },
    {
      name: "RSS after load at 1.05× floor@128Mi's after load is met, however far above the floor's idle",
      run: with_((r) => Object.assign(r.loaded, { 'companion@128Mi': 63 })),
      target: "RSS after load ≤ 1.05× floor's after load (same heap)",
      met: true,
    },
    {
      name: "RSS after load at 1.1× floor@128Mi's is missed, though below the plain floor's",
      run: with_((r) => Object.assign(r.loaded, { 'companion@128Mi': 66, floor: 100 })),
      target: "RSS after load ≤ 1.05× floor's after load (same heap)",
      met: false,
    },
    {
      name: 'RSS after load of the plain companion is shown, not judged',
      run: with_((r) => Object.assign(r.loaded, { companion: 200 })),
      target: "RSS after load ≤ 1.05× floor's after load (same heap)",
      met: true,
    },
    {
      name: 'throughput at 0.9× the same-heap floor is met, though below the plain floor',
      run: with_((r) => Object.assign(r.rps, { 'companion@128Mi': 900, floor: 2000, companion: 1800 })),
      target: 'throughput refused c100 ≥ 0.9× floor (same heap)',
      met: true,
    },
    {
      name: 'throughput of companion@128Mi at 0.89× floor@128Mi is missed',
      run: with_((r) => Object.assign(r.rps, { 'companion@128Mi': 890 })),
      target: 'throughput open c10 ≥ 0.9× floor (same heap)',
      met: false,
    },
    {
      name: 'throughput of the plain companion at 0.89× the floor is missed',
      run: with_((r) => Object.assign(r.rps, { companion: 890 })),
      target: 'throughput open c100 ≥ 0.9× floor (same heap)',
      met: false,
    },
    {
      name: 'probe overhead of 1 ms is met',
      run: with_((r) => Object.assign(r, { httpVia: 1.5 })),
      target: 'probe overhead HTTP p50 ≤ 1 ms',
      met: true,
    },
    {
      name: 'probe overhead of 1.01 ms is missed',
      run: with_((r) => Object.assign(r, { httpVia: 1.51 })),
      target: 'probe overhead HTTP p50 ≤ 1 ms',
      met: false,
    },
    {
      name: 'one failed liveness probe under the flood is missed',
      run: with_((r) => Object.assign(r, { failures: 1 })),
      target: 'fairness: 0 failed liveness probes',
      met: false,
    },
  ])('$name', ({ run, target, met }) => {
    const rows: { target: string; met?: boolean }[] = targetRows(results(run));
    expect(rows.find((row) => row.target === target)?.met).toBe(met);
    // The change moves only its own target (a server's req/s is the same on all four paths here).
    const measure = (label: string) => label.replace(/ (open|refused) c\d+ /, ' ');
    expect(rows.filter((row) => measure(row.target) !== measure(target) && row.met === false)).toEqual([]);
  });
});

describe('soak arithmetic', () => {
  it.each([
    { name: 'flat', points: [0, 1, 2].map((x) => ({ x, y: 5 })), want: 0 },
    { name: 'a line', points: [0, 1, 2, 3].map((x) => ({ x, y: 2 * x + 1 })), want: 2 },
    { name: 'falling', points: [0, 2].map((x) => ({ x, y: 10 - x })), want: -1 },
    {
      name: 'noise around a line',
      points: [
        { x: 0, y: 1 },
        { x: 1, y: 2 },
        { x: 2, y: 2 },
        { x: 3, y: 3 },
      ],
      want: 0.6,
    },
    { name: 'one point', points: [{ x: 1, y: 1 }], want: Number.NaN },
    { name: 'no spread in x', points: [1, 2].map((y) => ({ x: 4, y })), want: Number.NaN },
    { name: 'none', points: [], want: Number.NaN },
  ])('slope: $name', ({ points, want }) => {
    if (Number.isNaN(want)) expect(slope(points)).toBeNaN();
    else expect(slope(points)).toBeCloseTo(want, 10);
  });

  const samples = [
    { t: 0, v: 1 },
    { t: 15, v: 9 },
    { t: 25, v: 7 },
    { t: 30, v: 4 },
    { t: 45, v: null },
    { t: 50, v: 3 },
    { t: 60, v: null },
    { t: 75, v: null },
    { t: 90, v: 6 },
  ];
  it.each([
    {
      name: 'the lowest sample of each window from the warm-up on, at its own time in minutes',
      from: 30,
      want: [
        { x: 50 / 60, y: 3 },
        { x: 90 / 60, y: 6 },
      ],
    },
    {
      name: 'a window that starts before the warm-up ends is left out',
      from: 10,
      want: [
        { x: 50 / 60, y: 3 },
        { x: 90 / 60, y: 6 },
      ],
    },
    {
      name: 'every window with a value when there is no warm-up',
      from: 0,
      want: [
        { x: 0, y: 1 },
        { x: 50 / 60, y: 3 },
        { x: 90 / 60, y: 6 },
      ],
    },
    { name: 'nothing after the last sample', from: 120, want: [] },
  ])('windowLows (30 s windows): $name', ({ from, want }) => {
    expect(windowLows(samples, 'v', 30, from)).toEqual(want);
  });

  it.each([
    { name: 'below the limit', value: 0.1, want: 'met' },
    { name: 'at the limit', value: 0.25, want: 'met' },
    { name: 'falling', value: -3, want: 'met' },
    { name: 'above the limit', value: 0.26, want: 'missed' },
    { name: 'no slope', value: Number.NaN, want: 'unmeasured' },
  ])('check against 0.25: $name', ({ value, want }) => {
    expect(check(value, 0.25)).toBe(want);
  });

  it.each([
    { name: 'all met', checks: ['met', 'met', 'met'], want: 'flat' },
    { name: 'one missed', checks: ['met', 'missed', 'met'], want: 'not flat' },
    { name: 'missed beats unmeasured', checks: ['unmeasured', 'missed'], want: 'not flat' },
    { name: 'one unmeasured', checks: ['met', 'unmeasured'], want: 'not judged' },
  ])('soakVerdict: $name', ({ checks, want }) => {
    expect(soakVerdict(checks)).toBe(want);
  });
});
