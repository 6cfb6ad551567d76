// The fleet and contention benchmarks' arithmetic: kubelet's CPU shares, runc's cgroup v2 weight, kubelet's working
// set, smaps_rollup, and the choice of a CPU request from measured latencies. Pure functions, tested with tables.

import { describe, expect, it } from 'vitest';
import { fleetOptions } from '../../bench/fleet-options.mjs';
import {
  cpuKnob,
  mebibytesAtLeast,
  memoryLimitFor,
  memoryRequestFor,
  milliCpuToShares,
  parseMemory,
  parseMilliCpu,
  sharesToWeight,
  smallestPassing,
  smapsRollup,
  workingSet,
} from '../../bench/kube-resources.mjs';

describe('CPU requests as kubelet and runc write them', () => {
  it.each([
    { milliCpu: 0, shares: 2 },
    { milliCpu: 1, shares: 2 },
    { milliCpu: 5, shares: 5 },
    { milliCpu: 10, shares: 10 },
    { milliCpu: 100, shares: 102 },
    { milliCpu: 1000, shares: 1024 },
    { milliCpu: 300_000, shares: 262_144 },
  ])('$milliCpu m -> cpu.shares $shares (MilliCPUToShares)', ({ milliCpu, shares }) => {
    expect(milliCpuToShares(milliCpu)).toBe(shares);
  });

  it.each([
    { shares: 0, weight: 0 },
    { shares: 2, weight: 1 },
    { shares: 28, weight: 1 },
    { shares: 29, weight: 2 },
    { shares: 102, weight: 4 },
    { shares: 1024, weight: 39 },
    { shares: 262_144, weight: 10_000 },
  ])('cpu.shares $shares -> cpu.weight $weight (ConvertCPUSharesToCgroupV2Value)', ({ shares, weight }) => {
    expect(sharesToWeight(shares)).toBe(weight);
  });

  it('gives every request below 29m the same v2 weight, 1', () => {
    expect([5, 10, 20, 28].map((m) => cpuKnob(2, m))).toEqual(
      Array(4).fill({ file: 'cpu.weight', value: 1 }),
    );
    expect(cpuKnob(2, 29)).toEqual({ file: 'cpu.weight', value: 2 });
    expect(cpuKnob(1, 10)).toEqual({ file: 'cpu.shares', value: 10 });
  });

  it.each([
    { text: '10m', want: 10 },
    { text: '0.5', want: 500 },
    { text: '2', want: 2000 },
  ])('parses $text as $want millicores', ({ text, want }) => {
    expect(parseMilliCpu(text)).toBe(want);
  });

  it.each(['', '10Mi', '-5m', '0.0001', '0m'])('refuses %j, naming it', (text) => {
    expect(() => parseMilliCpu(text)).toThrow(`"${text}"`);
  });
});

describe('memory as kubelet counts it', () => {
  const stat = 'total_inactive_file 30\ntotal_active_file 5\ninactive_file 50\nactive_file 1\n';

  it('is usage minus inactive file pages: total_inactive_file on v1, inactive_file on v2', () => {
    expect(workingSet(1, 100, stat)).toBe(70);
    expect(workingSet(2, 100, stat)).toBe(50);
  });

  it('never goes below 0 (cAdvisor clamps it)', () => {
    expect(workingSet(2, 40, stat)).toBe(0);
  });

  it('reads smaps_rollup in MiB, private as clean + dirty', () => {
    const text = [
      '55d0c0a00000-7ffd5a3f2000 ---p 00000000 00:00 0                          [rollup]',
      'Rss:               76800 kB',
      'Pss:               27648 kB',
      'Pss_Anon:          20000 kB',
      'Shared_Clean:      49152 kB',
      'Private_Clean:      1024 kB',
      'Private_Dirty:     25600 kB',
    ].join('\n');
    expect(smapsRollup(text)).toEqual({ rss: 75, pss: 27, private: 26 });
    expect(() => smapsRollup('Rss: 1 kB')).toThrow('smaps_rollup has no Pss');
  });

  it.each([
    { bytes: 32 * 2 ** 20, want: '32Mi' },
    { bytes: 32 * 2 ** 20 + 1, want: '33Mi' },
  ])('rounds $bytes bytes up to $want', ({ bytes, want }) => {
    expect(mebibytesAtLeast(bytes)).toBe(want);
  });

  it.each([
    { text: '64Mi', want: 64 * 2 ** 20 },
    { text: '1Gi', want: 2 ** 30 },
    { text: '1024', want: 1024 },
  ])('parses $text', ({ text, want }) => {
    expect(parseMemory(text)).toBe(want);
  });

  it('refuses a decimal-suffixed or unknown quantity, naming it', () => {
    expect(() => parseMemory('64M')).toThrow('"64M"');
  });
});

describe('choosing a CPU request', () => {
  const rows = [
    { milliCpu: 50, p99: 120, failed: 0 },
    { milliCpu: 10, p99: 1000, failed: 3 },
    { milliCpu: 20, p99: 240, failed: 1 },
    { milliCpu: 100, p99: 40, failed: 0 },
  ];

  it('takes the smallest request whose p99 is under the limit with no failed probe', () => {
    expect(smallestPassing(rows, 250)?.milliCpu).toBe(50);
    expect(smallestPassing(rows, 100)?.milliCpu).toBe(100);
  });

  it('finds none when no request qualifies', () => {
    expect(smallestPassing(rows, 10)).toBeUndefined();
  });
});

describe('fleetOptions', () => {
  it('has defaults that fit the issue: 8 pods, 3 runs, 50 rounds, five or more candidate requests', () => {
    const plan = fleetOptions([], {});
    expect(plan).toMatchObject({ k: 8, runs: 3, rounds: 50 });
    expect(plan.candidates).toEqual([5, 10, 20, 50, 100, 200]);
  });

  it.each([
    { env: { BENCH_FLEET_PODS: '0' }, error: 'BENCH_FLEET_PODS: must be a whole number above 0, got "0"' },
    { env: { BENCH_CONTENTION_REQUESTS: '10m,x' }, error: 'BENCH_CONTENTION_REQUESTS: not a CPU quantity' },
  ])('refuses $env, naming it', ({ env, error }) => {
    expect(() => fleetOptions([], env)).toThrow(error);
  });

  it('refuses a --node that does not exist', () => {
    expect(() => fleetOptions(['/nonexistent/node'], {})).toThrow('--node: no such file: /nonexistent/node');
  });
});

describe('memory request and limit from measurement', () => {
  it.each([
    { ws: 30.8, want: '40Mi' },
    { ws: 22, want: '32Mi' },
    { ws: 25.6, want: '32Mi' },
    { ws: 25.7, want: '40Mi' },
  ])('a working set of $ws MiB calls for a request of $want', ({ ws, want }) => {
    expect(memoryRequestFor(ws)).toBe(want);
  });

  it.each([
    { peak: 320, want: '384Mi' },
    { peak: 100, want: '128Mi' },
    { peak: 107, want: '192Mi' },
  ])('a burst peak of $peak MiB calls for a limit of $want', ({ peak, want }) => {
    expect(memoryLimitFor(peak)).toBe(want);
  });
});
