// The live probe rules over samples: each fires on its fault with its numbers and sample count, stays silent on a
// sound probe, and stays silent below its minimum of samples.

import { describe, expect, it } from 'vitest';
import { liveFindings, MIN_PROBES, type WorkloadSamples } from '../../../src/analyze/probes/live-rules.js';
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
  probes: [probe({}), probe({ kind: 'liveness' })],
  containers: [],
  windows: [],
  span: 'over the last 1h',
  ...over,
});

const restart: ContainerSample = {
  namespace: 'ns',
  pod: 'web-1',
  container: 'app',
  restarts: 2,
  lastTermination: 'Error, exit 137',
};
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
