// The samples' sources, pure: a companion's exposition read as Prometheus would (histogram_quantile's
// interpolation), the fix as a strategic-merge patch or a YAML snippet, and Prometheus' range answer as steps.

import { describe, expect, it } from 'vitest';
import { companionSamples } from '../../../src/analyze/probes/companion-metrics.js';
import { exposedSamples, quantile } from '../../../src/analyze/probes/exposition.js';
import { fixText, patchBody } from '../../../src/analyze/probes/fix.js';
import { mergeChanges } from '../../../src/analyze/probes/merged-change.js';
import { windowsOf } from '../../../src/analyze/probes/promql.js';

describe('quantile', () => {
  it.each([
    { name: 'empty', buckets: [[Number.POSITIVE_INFINITY, 0]] as [number, number][], expected: undefined },
    {
      name: 'all in the first bucket',
      buckets: [
        [0.1, 100],
        [1, 100],
        [Number.POSITIVE_INFINITY, 100],
      ] as [number, number][],
      expected: 0.099,
    },
    {
      name: 'the tail near 1 s',
      buckets: [
        [0.5, 50],
        [0.9, 90],
        [1, 100],
        [Number.POSITIVE_INFINITY, 100],
      ] as [number, number][],
      expected: 0.99,
    },
    {
      name: 'past the last bound',
      buckets: [
        [1, 10],
        [Number.POSITIVE_INFINITY, 100],
      ] as [number, number][],
      expected: 1,
    },
  ])('$name', ({ buckets, expected }) => {
    const got = quantile(0.99, buckets);
    if (expected === undefined) expect(got).toBeUndefined();
    else expect(got).toBeCloseTo(expected, 6);
  });
});

describe('exposedSamples', () => {
  it("reads one companion's probe series, and ignores the header-driven ones", () => {
    const text = [
      '# TYPE osm_healthcheck_probe_duration_seconds histogram',
      'osm_healthcheck_probe_duration_seconds_bucket{kind="readiness",container="app",handler="httpGet",le="0.5"} 10',
      'osm_healthcheck_probe_duration_seconds_bucket{kind="readiness",container="app",handler="httpGet",le="1"} 40',
      'osm_healthcheck_probe_duration_seconds_bucket{kind="readiness",container="app",handler="httpGet",le="+Inf"} 40',
      'osm_healthcheck_probe_duration_seconds_count{kind="readiness",container="app",handler="httpGet"} 40',
      'osm_healthcheck_probe_duration_seconds_count{kind="healthcheck",container="",handler="tcpSocket"} 9',
      'osm_healthcheck_probe_timeout_seconds{kind="readiness",container="app",handler="httpGet"} 1',
      'osm_healthcheck_probe_first_success_seconds{kind="readiness",container="app",handler="httpGet"} 4.5',
      'osm_healthcheck_probe_failures_total{kind="readiness",container="app",handler="httpGet",reason="timeout"} 2',
      'osm_healthcheck_probe_failures_total{kind="readiness",container="app",handler="httpGet",reason="refused"} 0',
    ].join('\n');
    const [s, ...rest] = exposedSamples(text, 'ns', 'web-1');
    expect(rest).toEqual([]);
    expect(s).toMatchObject({
      kind: 'readiness',
      container: 'app',
      count: 40,
      timeoutSeconds: 1,
      firstSuccessSeconds: 4.5,
      failures: { timeout: 2, refused: 0 },
    });
    expect(s?.p99Seconds).toBeCloseTo(0.5 + 0.5 * ((0.99 * 40 - 10) / 30), 6);
  });
});

describe('fixText', () => {
  const change = { livenessProbe: { failureThreshold: 6 } };
  const app = [{ list: 'containers' as const, container: 'app', change }];
  it("patches a Deployment's template, merging the container by name", () => {
    expect(fixText({ namespace: 'ns', kind: 'Deployment', name: 'web' }, app)).toBe(
      `kubectl -n ns patch deployment/web --type=strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"app","livenessProbe":{"failureThreshold":6}}]}}}}'`,
    );
  });
  it("patches a CronJob's job template", () => {
    expect(patchBody({ namespace: 'ns', kind: 'CronJob', name: 'c' }, app)).toEqual({
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'app', ...change }] } } } } },
    });
  });
  it('patches several containers, of both lists, in one body', () => {
    const sidecar = {
      list: 'initContainers' as const,
      container: 'log',
      change: { startupProbe: { failureThreshold: 9 } },
    };
    expect(patchBody({ namespace: 'ns', kind: 'Deployment', name: 'web' }, [...app, sidecar])).toEqual({
      spec: {
        template: {
          spec: {
            initContainers: [{ name: 'log', startupProbe: { failureThreshold: 9 } }],
            containers: [{ name: 'app', ...change }],
          },
        },
      },
    });
  });
  it('gives YAML for a bare pod, whose probes cannot be patched', () => {
    expect(fixText({ namespace: 'ns', kind: 'Pod', name: 'p' }, app)).toBe(
      'in the manifest of Pod/p, containers[name=app]:\n  livenessProbe:\n    failureThreshold: 6',
    );
  });
});

describe('mergeChanges', () => {
  const of = (container: string, change: Record<string, Record<string, unknown>>) => ({
    list: 'containers' as const,
    container,
    change,
  });
  const http = { httpGet: { path: '/live', port: 8080 } };
  it.each([
    {
      name: 'one field set by two findings: once, at the larger budget',
      changes: [
        of('app', { livenessProbe: { failureThreshold: 3 } }),
        of('app', { livenessProbe: { failureThreshold: 6 } }),
      ],
      merged: [of('app', { livenessProbe: { failureThreshold: 6 } })],
    },
    {
      name: 'different fields of one probe together, and the timeout at the larger',
      changes: [
        of('app', { livenessProbe: { failureThreshold: 6, timeoutSeconds: 2 } }),
        of('app', { livenessProbe: { timeoutSeconds: 3 } }),
        of('app', { livenessProbe: { httpGet: null, grpc: null, tcpSocket: { port: 8080 } } }),
      ],
      merged: [
        of('app', {
          livenessProbe: {
            failureThreshold: 6,
            timeoutSeconds: 3,
            httpGet: null,
            grpc: null,
            tcpSocket: { port: 8080 },
          },
        }),
      ],
    },
    {
      name: 'the delay a startup probe makes 0 stays 0; two added startup probes, the larger budget',
      changes: [
        of('app', {
          startupProbe: { ...http, periodSeconds: 10, failureThreshold: 13 },
          livenessProbe: { initialDelaySeconds: 0 },
        }),
        of('app', { livenessProbe: { initialDelaySeconds: 5, failureThreshold: 6 } }),
        of('app', { startupProbe: { ...http, periodSeconds: 10, failureThreshold: 30 } }),
      ],
      merged: [
        of('app', {
          startupProbe: { ...http, periodSeconds: 10, failureThreshold: 30 },
          livenessProbe: { initialDelaySeconds: 0, failureThreshold: 6 },
        }),
      ],
    },
    {
      name: 'two containers stay two',
      changes: [
        of('app', { livenessProbe: { failureThreshold: 6 } }),
        of('side', { readinessProbe: { timeoutSeconds: 2 } }),
      ],
      merged: [
        of('app', { livenessProbe: { failureThreshold: 6 } }),
        of('side', { readinessProbe: { timeoutSeconds: 2 } }),
      ],
    },
  ])('$name', ({ changes, merged }) => {
    expect(mergeChanges(changes)).toEqual(merged);
  });
});

describe('windowsOf', () => {
  it('turns a matrix of liveness failures into steps with every pod seen in each', () => {
    const matrix = [
      {
        metric: { namespace: 'ns', pod: 'a', container: 'app' },
        values: [
          [600, 0],
          [900, 2],
        ] as [number, number][],
      },
      { metric: { namespace: 'ns', pod: 'b', container: 'app' }, values: [[900, 1.9]] as [number, number][] },
    ];
    expect(windowsOf(matrix, 300)).toEqual([
      { namespace: 'ns', container: 'app', from: 300, to: 600, pods: { a: 0 } },
      { namespace: 'ns', container: 'app', from: 600, to: 900, pods: { a: 2, b: 2 } },
    ]);
  });
});

describe('companionSamples', () => {
  const pods = Array.from({ length: 10 }, (_, i) => ({ namespace: 'shop', pod: `web-${i}` }));
  const empty = async () => ({ ok: true as const, text: '' });

  it('reads at most --companion-metrics pods, and says how many it left', async () => {
    const asked: string[] = [];
    const record = async (path: string) => {
      asked.push(path);
      return empty();
    };
    const { notes } = await companionSamples(record, pods, 6);
    expect(asked).toHaveLength(6);
    expect(asked[0]).toBe('/api/v1/namespaces/shop/pods/web-0:15904/proxy/metrics');
    expect(notes).toContain('read 6 of 10 companions (--companion-metrics 6)');
  });

  it('starts no batch once the budget is spent, and says so', async () => {
    let clock = 0;
    const asked: string[] = [];
    // Each answer moves the clock 10 ms, a batch of four 40 ms, of a 100 ms budget: batches of four start at 0, 40 and 80; none at 120.
    const slow = async (path: string) => {
      asked.push(path);
      clock += 10;
      return empty();
    };
    const { notes } = await companionSamples(slow, [...pods, ...pods, ...pods], 30, {
      ms: 100,
      now: () => clock,
    });
    expect(asked).toHaveLength(12);
    expect(notes).toContain('asked 12 of 30 companions before the 0.1 s budget ran out');
  });
});
