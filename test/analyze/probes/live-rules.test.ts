// The live probe rules over samples and kubelet's record: each fires on its fault with its numbers and sample
// count, stays silent on a sound probe, and stays silent below its minimum of samples; restarts are blamed on
// liveness by the companion's counts or kubelet's events on the same pod, in one finding; startup-budget's fix
// and threshold agree; replicas restarted together are a shared dependency whatever the source.

import { describe, expect, it } from 'vitest';
import type { LivenessEvents } from '../../../src/analyze/probes/kubelet-events.js';
import {
  allWithin,
  BOOT_SHARE,
  liveFindings,
  MIN_PROBES,
  type WorkloadSamples,
} from '../../../src/analyze/probes/live-rules.js';
import { type ContainerProbes, podProbes } from '../../../src/analyze/probes/pod-probes.js';
import type { ContainerSample, FailureWindow, ProbeSample } from '../../../src/analyze/probes/samples.js';

const [container] = podProbes({
  containers: [
    {
      name: 'app',
      readinessProbe: { httpGet: { path: '/ready', port: 8080 }, timeoutSeconds: 1 },
      livenessProbe: { httpGet: { path: '/live', port: 8080 }, timeoutSeconds: 1, initialDelaySeconds: 10 },
    },
  ],
}).containers;

const probe = (over: Partial<ProbeSample>): ProbeSample => ({
  namespace: 'ns',
  pod: 'web-1',
  container: 'app',
  kind: 'readiness',
  count: 120,
  p99Seconds: 0.05,
  timeoutSeconds: 1,
  failures: {},
  firstSuccessSeconds: undefined,
  ...over,
});

const samples = (over: Partial<WorkloadSamples>): WorkloadSamples => ({
  pods: ['web-1', 'web-2'],
  probes: [probe({}), probe({ kind: 'liveness' })],
  containers: [],
  events: [],
  windows: [],
  span: 'over the last 1h',
  ...over,
});

const restart: ContainerSample = {
  namespace: 'ns',
  pod: 'web-1',
  container: 'app',
  restarts: 2,
  counted: 'over the window',
  lastTermination: 'Error, exit 137',
  lastEndedAt: undefined,
};

/** 14:00 UTC on a day, and a minute. */
const T0 = Date.parse('2026-12-06T14:00:00Z');
const MIN = 60_000;

/** The pod's status: restartCount 3, the last ended at `at`. */
const status = (pod: string, at: number): ContainerSample => ({
  namespace: 'ns',
  pod,
  container: 'app',
  restarts: 3,
  counted: 'restartCount',
  lastTermination: 'Error, exit 137',
  lastEndedAt: at,
});

/** Kubelet's liveness events on one pod: three kills between `first` and `last`. */
const killed = (
  pod: string,
  first: number,
  last: number,
  over: Partial<LivenessEvents> = {},
): LivenessEvents => ({
  namespace: 'ns',
  pod,
  container: 'app',
  kills: 3,
  killedAt: [first, last],
  failures: 9,
  timeouts: 0,
  message: 'Liveness probe failed: HTTP probe failed with statuscode: 500',
  ...over,
});

/** The cluster's record alone: no live source. */
const recorded = (over: Partial<WorkloadSamples>): WorkloadSamples =>
  samples({ probes: [], windows: undefined, span: undefined, ...over });
const step = (pods: Record<string, number>): FailureWindow => ({
  namespace: 'ns',
  container: 'app',
  from: 0,
  to: 300,
  pods,
});

const found = (w: WorkloadSamples) => liveFindings(container as ContainerProbes, w);

describe('live probe rules', () => {
  it.each([
    { name: 'sound: fast probes, no failures, no restarts', w: samples({}), expected: [] },
    {
      name: 'near timeout: readiness p99 780 ms against 1 s',
      w: samples({
        probes: [probe({ p99Seconds: 0.78, failures: { timeout: 3 } }), probe({ kind: 'liveness' })],
      }),
      expected: ['near-timeout'],
    },
    {
      name: "slow answers while another caller floods the pod's companion: caller-load, not near-timeout",
      w: samples({
        probes: [probe({ p99Seconds: 0.78, failures: { timeout: 3 } }), probe({ kind: 'liveness' })],
        callerLoad: [{ namespace: 'ns', pod: probe({}).pod, requests: 52_000 }],
      }),
      expected: ['caller-load'],
    },
    {
      name: 'a few stray connections cut on another pod: still near-timeout',
      w: samples({
        probes: [probe({ p99Seconds: 0.78, failures: { timeout: 3 } }), probe({ kind: 'liveness' })],
        callerLoad: [
          { namespace: 'ns', pod: probe({}).pod, requests: 3 },
          { namespace: 'ns', pod: 'elsewhere', requests: 52_000 },
        ],
      }),
      expected: ['near-timeout'],
    },
    {
      name: 'near timeout, too few probes to say',
      w: samples({ probes: [probe({ p99Seconds: 0.95, count: MIN_PROBES - 1 })] }),
      expected: [],
    },
    {
      name: 'liveness restarts: restarts and liveness failures',
      w: samples({
        probes: [probe({}), probe({ kind: 'liveness', failures: { status: 6, timeout: 0 } })],
        containers: [restart],
      }),
      expected: ['liveness-restarts'],
    },
    {
      name: 'restarts without liveness failures are not liveness restarts (an OOM kill)',
      w: samples({ containers: [restart] }),
      expected: [],
    },
    {
      name: 'restarts, with liveness failing on another pod only, are not blamed on liveness',
      w: samples({
        probes: [probe({}), probe({ kind: 'liveness', pod: 'web-2', failures: { status: 6 } })],
        containers: [restart],
      }),
      expected: [],
    },
    {
      name: "no live source: restarts in the status, kills in kubelet's events on the same pod",
      w: recorded({ pods: ['web-1'], containers: [status('web-1', T0)], events: [killed('web-1', T0, T0)] }),
      expected: ['liveness-restarts'],
    },
    {
      name: 'no live source: a restart without liveness events (a crash, an OOM kill) is not blamed',
      w: recorded({ containers: [status('web-1', T0)] }),
      expected: [],
    },
    {
      name: 'no live source: liveness events without a restart in the window say nothing',
      w: recorded({ pods: ['web-1'], events: [killed('web-1', T0, T0)] }),
      expected: [],
    },
    {
      name: 'startup budget: first success at 35 s of a 40 s budget',
      w: samples({ probes: [probe({}), probe({ kind: 'liveness', firstSuccessSeconds: 25 })] }),
      expected: ['startup-budget'],
    },
    {
      name: 'startup budget: a quick boot',
      w: samples({ probes: [probe({}), probe({ kind: 'liveness', firstSuccessSeconds: 2 })] }),
      expected: [],
    },
    {
      name: 'shared dependency: every replica failed liveness in one step',
      w: samples({ windows: [step({ 'web-1': 0, 'web-2': 0 }), step({ 'web-1': 3, 'web-2': 4 })] }),
      expected: ['shared-dependency'],
    },
    {
      name: 'one replica failing alone is the pod, not a dependency',
      w: samples({ windows: [step({ 'web-1': 3, 'web-2': 0 })] }),
      expected: [],
    },
    {
      name: 'one replica is no evidence of sharing',
      w: samples({ windows: [step({ 'web-1': 3 })] }),
      expected: [],
    },
    {
      name: "shared dependency without steps: both replicas' liveness restarts within minutes (events, status)",
      w: recorded({
        containers: [status('web-1', T0 + MIN), status('web-2', T0 + 2 * MIN)],
        events: [killed('web-1', T0, T0 + MIN), killed('web-2', T0, T0 + 2 * MIN)],
      }),
      expected: ['liveness-restarts', 'shared-dependency'],
    },
    {
      name: 'no shared dependency: the replicas restarted an hour apart',
      w: recorded({
        containers: [status('web-1', T0), status('web-2', T0 + 60 * MIN)],
        events: [killed('web-1', T0, T0), killed('web-2', T0 + 60 * MIN, T0 + 60 * MIN)],
      }),
      expected: ['liveness-restarts'],
    },
    {
      name: 'no shared dependency: one of two replicas restarted',
      w: recorded({ containers: [status('web-1', T0)], events: [killed('web-1', T0, T0)] }),
      expected: ['liveness-restarts'],
    },
    {
      name: "shared dependency from the companions' counts and the pods' status (--companion-metrics)",
      w: samples({
        span: 'since each companion started',
        windows: undefined,
        probes: [
          probe({ kind: 'liveness', pod: 'web-1', failures: { status: 3 } }),
          probe({ kind: 'liveness', pod: 'web-2', failures: { status: 3 } }),
        ],
        containers: [status('web-1', T0), status('web-2', T0 + 30_000)],
      }),
      expected: ['liveness-restarts', 'shared-dependency'],
    },
  ])('$name', ({ w, expected }) => {
    expect(found(w).map((f) => f.rule)).toEqual(expected);
  });

  it('gives its evidence in numbers, with the sample count', () => {
    const [f] = found(samples({ probes: [probe({ p99Seconds: 0.78, failures: { timeout: 3 } })] }));
    expect(f?.evidence).toBe(
      'readiness p99 780 ms (pod web-1) against timeoutSeconds 1 over the last 1h, 3 timeouts in 120 probes',
    );
    expect(f?.change).toEqual({ readinessProbe: { timeoutSeconds: 2 } });
  });

  it('marks liveness restarts, and only them, as needing action', () => {
    const all = found(
      samples({
        probes: [probe({ p99Seconds: 0.9 }), probe({ kind: 'liveness', failures: { timeout: 4 } })],
        containers: [restart],
      }),
    );
    expect(all.map((f) => [f.rule, f.needsAction])).toEqual([
      ['liveness-restarts', true],
      ['near-timeout', false],
    ]);
    expect(all[0]?.evidence).toContain(
      '2 restarts of app on 1 pod over the last 1h (last: Error, exit 137), and 4 liveness failures in 120 probes: 4 timeout',
    );
    expect(all[0]?.change).toEqual({ livenessProbe: { failureThreshold: 6, timeoutSeconds: 2 } });
  });
});

describe('liveness restarts from the record, with or without live data', () => {
  it("names the pods' own restartCount and kubelet's events, with no live source", () => {
    const [f, ...rest] = found(
      recorded({
        containers: [status('web-1', T0 + MIN), status('web-2', T0 + 2 * MIN)],
        events: [killed('web-1', T0, T0 + MIN), killed('web-2', T0, T0 + 2 * MIN)],
      }),
    );
    expect(rest.map((r) => r.rule)).toEqual(['shared-dependency']);
    expect(f?.rule).toBe('liveness-restarts');
    expect(f?.needsAction).toBe(true);
    expect(f?.evidence).toBe(
      '6 restarts of app on 2 pods (restartCount, the last ended 14:02 UTC: Error, exit 137), and kubelet\'s events: 6 Killing for failed liveness, 18 Unhealthy (last: "Liveness probe failed: HTTP probe failed with statuscode: 500")',
    );
    expect(f?.change).toEqual({ livenessProbe: { failureThreshold: 6 } });
    expect(rest[0]?.evidence).toBe(
      "liveness restarted all 2 replicas within 2 min (14:00-14:02 UTC, restart times from kubelet's events and the pods' status): a dependency they share, not the pods",
    );
  });

  it("with the companions' counts too, one finding holds both, each with its own span", () => {
    const all = found(
      samples({
        span: 'since each companion started',
        probes: [probe({ kind: 'liveness', failures: { status: 5 }, count: 5 })],
        containers: [status('web-1', T0)],
        events: [killed('web-1', T0, T0, { kills: 1, failures: 3 })],
      }),
    );
    expect(all.map((f) => f.rule)).toEqual(['liveness-restarts']);
    expect(all[0]?.evidence).toBe(
      '3 restarts of app on 1 pod (restartCount, the last ended 14:00 UTC: Error, exit 137), and 5 liveness failures in 5 probes since each companion started: 5 status; kubelet\'s events: 1 Killing for failed liveness, 3 Unhealthy (last: "Liveness probe failed: HTTP probe failed with statuscode: 500")',
    );
  });

  it("doubles timeoutSeconds where kubelet's events say the probe timed out", () => {
    const [f] = found(
      recorded({
        pods: ['web-1'],
        containers: [status('web-1', T0)],
        events: [
          killed('web-1', T0, T0, {
            timeouts: 2,
            message: 'Liveness probe failed: context deadline exceeded',
          }),
        ],
      }),
    );
    expect(f?.change).toEqual({ livenessProbe: { failureThreshold: 6, timeoutSeconds: 2 } });
  });
});

describe('startup-budget: its threshold and its fix from one share', () => {
  /** A container whose liveness (or startup) probe has this timing, and a boot of `seconds` to its first success. */
  const boot = (kind: 'liveness' | 'startup', timing: Record<string, number>, seconds: number) => {
    const [c] = podProbes({
      containers: [{ name: 'app', [`${kind}Probe`]: { httpGet: { path: '/live', port: 8080 }, ...timing } }],
    }).containers;
    const w = samples({ probes: [probe({ kind, firstSuccessSeconds: seconds })] });
    return liveFindings(c as ContainerProbes, w).filter((f) => f.rule === 'startup-budget');
  };

  it.each<{ name: string; timing: Record<string, number>; seconds: number; flagged: boolean }>([
    { name: 'a boot at 70% of a 30 s liveness budget', timing: {}, seconds: 21, flagged: true },
    { name: 'a boot at exactly half of it', timing: {}, seconds: 15, flagged: false },
    { name: 'a boot just past half', timing: {}, seconds: 15.5, flagged: true },
    {
      name: 'a delay and a boot past half of 40 s',
      timing: { initialDelaySeconds: 10 },
      seconds: 11,
      flagged: true,
    },
  ])('$name: flagged $flagged', ({ timing, seconds, flagged }) => {
    expect(boot('liveness', timing, seconds).length > 0).toBe(flagged);
  });

  it('after its fix, no boot it flagged is flagged again (every timing, every boot past half)', () => {
    let flagged = 0;
    for (const kind of ['liveness', 'startup'] as const)
      for (const periodSeconds of [1, 3, 10])
        for (const failureThreshold of [1, 3, 7])
          for (const initialDelaySeconds of [0, 5])
            for (const share of [0.51, 0.7, 0.8, 0.99]) {
              const allowed = initialDelaySeconds + periodSeconds * failureThreshold;
              const seconds = share * allowed - initialDelaySeconds;
              if (seconds <= 0) continue;
              const [f] = boot(kind, { periodSeconds, failureThreshold, initialDelaySeconds }, seconds);
              expect(
                f,
                `${kind} ${periodSeconds}x${failureThreshold}+${initialDelaySeconds}, ${seconds} s`,
              ).toBeDefined();
              flagged++;
              // The fixed startup probe (added, or its failureThreshold raised), and the same boot seen through it:
              // the companion times a startup probe from its first request, after the probe's own delay.
              const fixed = { ...(f?.change?.startupProbe ?? {}) };
              const timing =
                kind === 'startup'
                  ? { periodSeconds, initialDelaySeconds, ...fixed }
                  : { periodSeconds, ...fixed };
              const delay = kind === 'startup' ? initialDelaySeconds : 0;
              const longest = seconds + initialDelaySeconds;
              expect(boot('startup', timing, longest - delay)).toEqual([]);
            }
    expect(flagged).toBeGreaterThan(100);
    expect(BOOT_SHARE).toBe(0.5);
  });
});

describe('allWithin: a span of restarts that holds every replica', () => {
  const t = (pod: string, minute: number) => ({ pod, at: minute * MIN });
  it.each([
    { name: 'no restarts', times: [], run: undefined },
    { name: 'one replica only', times: [t('a', 0), t('a', 1)], run: undefined },
    { name: 'both within 5 minutes', times: [t('a', 0), t('b', 4)], run: [t('a', 0), t('b', 4)] },
    { name: 'both, 6 minutes apart', times: [t('a', 0), t('b', 6)], run: undefined },
    {
      name: 'the run slides past an early restart, and holds all that falls within it',
      times: [t('a', 0), t('b', 10), t('a', 12), t('b', 14), t('a', 16)],
      run: [t('b', 10), t('a', 12), t('b', 14)],
    },
  ])('$name', ({ times, run }) => {
    expect(allWithin(times, ['a', 'b'], 5 * MIN)).toEqual(run);
  });
});
