// The companion's Prometheus exposition: a prom-client Registry whose series take their values from the Recorder
// at scrape time, build info, and prom-client's default process and Node.js metrics. Loaded on the first
// GET /metrics only (load-exposition.ts): in serve's build it is a file of its own, dist/commands/serve-metrics.cjs,
// so neither prom-client nor this module is parsed at start-up (scripts/build.mjs). It imports only types from
// recorder.ts, so that file carries nothing of serve's but prom-client and this.

import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import type { DurationSample, Recorder, Sample } from './recorder.js';

export const METRIC_PREFIX = 'osm_healthcheck_';

const LINT_FAILING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export interface Exposition {
  /** Prometheus' text exposition format 0.0.4. */
  readonly contentType: string;
  /** Every series, in that format, as prom-client writes it. */
  metrics(): Promise<string>;
}

export interface ExpositionOptions {
  /** The companion's version (package.json), for build_info. */
  version: string;
  /** Times the image's supervisor restarted serve in this container before this one (RESTARTS_ENV). */
  restarts: number;
}

type Labels = Record<string, string | number>;

export function createExposition(recorder: Recorder, options: ExpositionOptions): Exposition {
  const registry = new Registry();
  const registers = [registry];
  // Standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...), unprefixed, so the dashboards
  // and alerts written for every other Node.js and Go process work on the companion too. They are tracked from
  // here on: what happened before the first scrape (GC pauses, event-loop lag) is not in them.
  const cpuBefore = process.cpuUsage();
  collectDefaultMetrics({ register: registry });
  // Except CPU, which the process has counted all along: prom-client's CPU counters start at 0 when made, so they
  // are given what was spent before, and process_cpu_seconds_total stays the total since start it is elsewhere.
  for (const [name, micros] of [
    ['process_cpu_user_seconds_total', cpuBefore.user],
    ['process_cpu_system_seconds_total', cpuBefore.system],
    ['process_cpu_seconds_total', cpuBefore.user + cpuBefore.system],
  ] as const) {
    (registry.getSingleMetric(name) as Counter | undefined)?.inc(micros / 1e6);
  }
  // Gauges named like counters fail `promtool check metrics`; the per-type gauges beside them hold the same counts.
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);

  // Counters and gauges are prom-client's own, refilled from the recorder by their collect() before each scrape.
  const counter = (name: string, help: string, labelNames: string[], read: () => Sample<Labels>[]) =>
    new Counter({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const { labels, value } of read()) this.inc(labels, value);
      },
    });
  counter(
    'probes_total',
    "Probes run, by probe kind (or healthcheck for header-driven ones), container, handler and kubelet's verdict.",
    ['kind', 'container', 'handler', 'verdict'],
    () => recorder.probeRuns(),
  );
  registry.registerMetric(
    durationHistogram(
      `${METRIC_PREFIX}probe_duration_seconds`,
      'Time a probe took, from the start of the connect to the verdict.',
      recorder,
    ),
  );
  counter(
    'probes_refused_total',
    'Probes refused at once because their listener already had its limit of probes in flight.',
    ['listener'],
    () => recorder.refused(),
  );
  new Gauge({
    name: `${METRIC_PREFIX}probes_in_flight`,
    help: 'Probes running now, by the listener they came in on.',
    labelNames: ['listener'],
    registers,
    collect() {
      for (const { labels, value } of recorder.probesInFlight()) this.set(labels, value);
    },
  });
  counter(
    'header_checks_total',
    'Requests on /osm-healthcheck by outcome: tcp, http, unwrapped (run), invalid (400), port_not_allowed (403).',
    ['outcome'],
    () => recorder.headerCheckOutcomes(),
  );
  new Counter({
    name: `${METRIC_PREFIX}restarts_total`,
    help: "Times serve exited (crash, OOM kill) and the image's supervisor restarted it in this container; kubelet's own restarts of the container start it again at 0.",
    registers,
  }).inc(options.restarts);
  new Gauge({
    name: `${METRIC_PREFIX}build_info`,
    help: 'Always 1; the labels say which companion and which Node.js runs.',
    labelNames: ['version', 'node_version'],
    registers,
  }).set({ version: options.version, node_version: process.versions.node }, 1);

  return { contentType: registry.contentType, metrics: () => registry.metrics() };
}

/**
 * A histogram whose buckets, sum and count are the recorder's, exact. prom-client's Histogram can only observe()
 * values one by one, so this is a metric object of the shape its Registry reads (lib/registry.js: name, help,
 * type, and get() resolving to values with metricName and labels, as Histogram#get() gives), and prom-client
 * still writes the text.
 */
function durationHistogram(name: string, help: string, recorder: Recorder): Metric {
  const base = { name, help, type: 'histogram', aggregator: 'sum' } as const;
  const series = (s: DurationSample) => [
    ...s.cumulative.map((value, i) => ({
      metricName: `${name}_bucket`,
      labels: { ...s.labels, le: recorder.bounds[i] ?? Number.NaN },
      value,
    })),
    { metricName: `${name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count },
    { metricName: `${name}_sum`, labels: s.labels, value: s.sumSeconds },
    { metricName: `${name}_count`, labels: s.labels, value: s.count },
  ];
  const metric = {
    ...base,
    get: async () => ({ ...base, values: recorder.durations().flatMap(series) }),
    // The recorder owns the values: Registry#resetMetrics() has nothing to clear here.
    reset: () => {},
  };
  // prom-client's types admit only its own metric classes; its Registry uses no more of a metric than the above.
  return metric as unknown as Metric;
}
