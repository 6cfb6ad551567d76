// The companion's Prometheus exposition: a prom-client Registry whose series take their values from the Recorder
// at scrape time, build info, and prom-client's default process and Node.js metrics. Loaded on the first
// GET /metrics only (load-exposition.ts): in serve's build it is a file of its own, dist/commands/serve-metrics.cjs,
// so neither prom-client nor this module is parsed at start-up (scripts/build.mjs). It imports only types from
// recorder.ts, so that file carries nothing of serve's but prom-client and this.

import { Counter, Gauge, Registry } from 'prom-client';
import { exactHistogram } from './histogram.js';
import { processMetrics } from './process-metrics.js';
import type { Recorder } from './recorder.js';
import { refilledMetrics } from './refilled.js';

export const METRIC_PREFIX = 'osm_healthcheck_';
/** The labels that name a probe series: a table entry, or a header-driven handler (kind healthcheck). */
const PROBE_LABELS = ['kind', 'container', 'handler'];

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

export function createExposition(recorder: Recorder, options: ExpositionOptions): Exposition {
  const registry = new Registry();
  const registers = [registry];
  processMetrics(registry);

  // Counters and gauges are prom-client's own, refilled from the recorder by their collect() before each scrape.
  const { counter, gauge } = refilledMetrics(registers, METRIC_PREFIX);
  counter(
    'probes_total',
    "Probes run, by probe kind (or healthcheck for header-driven ones), container, handler and kubelet's verdict.",
    [...PROBE_LABELS, 'verdict'],
    () => recorder.probeRuns(),
  );
  registry.registerMetric(
    exactHistogram(
      `${METRIC_PREFIX}probe_duration_seconds`,
      'Time a probe took, from the start of the connect to the verdict.',
      recorder.bounds,
      () => recorder.durations(),
    ),
  );
  counter(
    'probe_failures_total',
    'Probes that failed, by why (docs/metrics.md#failure-reasons): timeout, refused, reset, status, tls, redirect, grpc_status, other.',
    [...PROBE_LABELS, 'reason'],
    () => recorder.failures(),
  );
  gauge(
    'probe_timeout_seconds',
    "Each probe table entry's timeoutSeconds, as kubelet gives the probe.",
    PROBE_LABELS,
    () => recorder.timeouts(),
  );
  gauge(
    'probe_first_success_seconds',
    "Seconds from the first probe of a table entry this companion ran to that entry's first success; absent until then.",
    PROBE_LABELS,
    () => recorder.firstSuccesses(),
  );
  counter(
    'probes_refused_total',
    'Checks refused at once because their listener already had its limit of checks in flight and the caller held its share.',
    ['listener'],
    () => recorder.refused(),
  );
  new Gauge({
    name: `${METRIC_PREFIX}probes_in_flight`,
    help: 'Checks of the app running now, by the listener that began them.',
    labelNames: ['listener'],
    registers,
    collect() {
      for (const { labels, value } of recorder.probesInFlight()) this.set(labels, value);
    },
  });
  counter(
    'header_checks_total',
    'Requests on /osm-healthcheck by outcome: tcp, http, unwrapped (run), invalid (400), port_not_allowed (403: not a table probe, or a port outside --allowed-ports).',
    ['outcome'],
    () => recorder.headerCheckOutcomes(),
  );
  counter(
    'shared_answers_total',
    'Answers given from a check another request began (at most 100 ms before this one arrived, the next one, or at its deadline the one running when it arrived): a flood of probe requests shows here, not at the app.',
    ['listener'],
    () => recorder.sharedAnswers(),
  );
  counter(
    'deadline_answers_total',
    "Shared answers given at the request's deadline by the check that was running when it arrived, begun before it by more than 100 ms, because the next check had not ended in time: a slow probe under a flood of its own request shows here.",
    ['listener'],
    () => recorder.deadlineAnswers(),
  );
  counter(
    'connections_evicted_total',
    'Connections closed to make room for a caller holding fewer, once a listener held its limit: one caller holding many connections shows here.',
    ['listener'],
    () => recorder.connectionsEvicted(),
  );
  counter(
    'connections_cut_total',
    'Connections cut before an answer, by why: timeout (headers past the header deadline, a request past its timeout), malformed (not HTTP/1.1), too_large (headers past 16 KiB), rate (closed as accepted: the caller opened more than 50 a second on the port).',
    ['listener', 'reason'],
    () => recorder.connectionsCut(),
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
