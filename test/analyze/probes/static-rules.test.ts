// The static probe rules, table by table: each fires on its fault and stays silent on the sound template and on
// the pattern the Kubernetes docs endorse (liveness on the readiness endpoint with a higher failureThreshold).

import { describe, expect, it } from 'vitest';
import { type ContainerProbes, type PodProbes, podProbes } from '../../../src/analyze/probes/pod-probes.js';
import { staticFindings } from '../../../src/analyze/probes/static-rules.js';

const http = (path: string, extra: Record<string, unknown> = {}) => ({
  httpGet: { path, port: 8080 },
  ...extra,
});

/** A pod spec with one app container `app` and these probes. */
const spec = (probes: Record<string, unknown>) => ({
  containers: [{ name: 'app', image: 'app', ...probes }],
});

const rules = (probes: Record<string, unknown>, behindService = true) =>
  podProbes(spec(probes)).containers.flatMap((c) => staticFindings(c, behindService).map((f) => f.rule));

describe('static probe rules', () => {
  it.each([
    {
      name: 'sound: readiness and a later liveness on their own endpoints',
      probes: { readinessProbe: http('/ready', { periodSeconds: 5 }), livenessProbe: http('/live') },
      expected: [],
    },
    {
      name: 'docs-endorsed: the same endpoint, liveness with a higher failureThreshold',
      probes: { readinessProbe: http('/healthz'), livenessProbe: http('/healthz', { failureThreshold: 6 }) },
      expected: [],
    },
    {
      name: 'liveness identical to readiness',
      probes: { readinessProbe: http('/healthz'), livenessProbe: http('/healthz') },
      expected: ['liveness-not-after-readiness'],
    },
    {
      name: 'liveness on the same check failing sooner than readiness',
      probes: {
        readinessProbe: http('/healthz', { periodSeconds: 10, failureThreshold: 6 }),
        livenessProbe: http('/healthz', { periodSeconds: 10, failureThreshold: 4 }),
      },
      expected: ['liveness-not-after-readiness'],
    },
    {
      name: 'same timing on different checks is not the same check',
      probes: { readinessProbe: http('/ready'), livenessProbe: http('/live') },
      expected: [],
    },
    {
      name: 'liveness without readiness behind a Service',
      probes: { livenessProbe: http('/live') },
      expected: ['liveness-without-readiness'],
    },
    {
      name: 'initialDelaySeconds carrying the boot, no startup probe',
      probes: { readinessProbe: http('/ready'), livenessProbe: http('/live', { initialDelaySeconds: 120 }) },
      expected: ['startup-in-initial-delay'],
    },
    {
      name: 'a short initialDelaySeconds is not a boot',
      probes: { readinessProbe: http('/ready'), livenessProbe: http('/live', { initialDelaySeconds: 15 }) },
      expected: [],
    },
    {
      name: 'a startup probe carries the boot',
      probes: {
        readinessProbe: http('/ready'),
        livenessProbe: http('/live', { initialDelaySeconds: 120 }),
        startupProbe: http('/live', { failureThreshold: 30 }),
      },
      expected: [],
    },
    {
      name: 'a liveness failure budget of 3 s',
      probes: { readinessProbe: http('/ready'), livenessProbe: http('/live', { periodSeconds: 1 }) },
      expected: ['liveness-budget-short'],
    },
    {
      name: 'an exec probe',
      probes: { readinessProbe: { exec: { command: ['cat', '/tmp/ready'] } }, livenessProbe: http('/live') },
      expected: ['exec-probe'],
    },
  ])('$name', ({ probes, expected }) => {
    expect(rules(probes)).toEqual(expected);
  });

  it('asks for no readiness probe where no Service sends traffic', () => {
    expect(rules({ livenessProbe: http('/live') }, false)).toEqual([]);
  });

  it("reads the original check from the companion's table, the timing from the rewritten probe", () => {
    const rewritten = (kind: string) => ({
      httpGet: { path: `/osm-healthcheck/${kind}/app`, port: kind === 'liveness' ? 15901 : 15902 },
      periodSeconds: 10,
      failureThreshold: 3,
    });
    const table = {
      liveness: { app: { httpGet: { path: '/healthz', port: 8080 } } },
      readiness: { app: { httpGet: { path: '/healthz', port: 8080 } } },
    };
    const pod: PodProbes = podProbes({
      containers: [
        { name: 'app', livenessProbe: rewritten('liveness'), readinessProbe: rewritten('readiness') },
        { name: 'osm-healthcheck', env: [{ name: 'OSM_HEALTHCHECK_PROBES', value: JSON.stringify(table) }] },
      ],
    });
    expect(pod.companion).toBe(true);
    expect(pod.containers.map((c) => c.container)).toEqual(['app']);
    expect(pod.containers[0]?.probes.liveness?.check).toBe('HTTP :8080/healthz');
    expect(staticFindings(pod.containers[0] as ContainerProbes, true).map((f) => f.rule)).toEqual([
      'liveness-not-after-readiness',
    ]);
  });

  it('gives fixes that, applied to the template, clear the rule they come from', () => {
    const faults = [
      { readinessProbe: http('/healthz'), livenessProbe: http('/healthz') },
      { livenessProbe: http('/live') },
      { readinessProbe: http('/ready'), livenessProbe: http('/live', { initialDelaySeconds: 120 }) },
      { readinessProbe: http('/ready'), livenessProbe: http('/live', { periodSeconds: 1 }) },
    ];
    for (const probes of faults) {
      const [c] = podProbes(spec(probes)).containers;
      const fixed: Record<string, Record<string, unknown>> = structuredClone(probes) as never;
      for (const f of staticFindings(c as ContainerProbes, true)) {
        for (const [field, change] of Object.entries(f.change ?? {}))
          fixed[field] = { ...fixed[field], ...change };
      }
      expect(rules(fixed), JSON.stringify(fixed)).toEqual([]);
    }
  });
});
