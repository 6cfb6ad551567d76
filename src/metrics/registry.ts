// The companion's Prometheus registry (prom-client): probe runs and durations per table entry, the in-flight gate
// per listener, header-driven checks, build info, and prom-client's default process and Node.js metrics.
// Every labelled child is made here, up front, from the table and the fixed sets: callers pass entries and enums,
// never label text, and every series exists from the first scrape on (so rate() and absent() work at once).

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Verdict } from '../probe/result.js';
import { LISTENER_ROLES } from '../scheme.js';
import { entries } from '../table/parse.js';
import type { ProbeEntry, ProbeTable } from '../table/types.js';
import { durationBuckets, longestTimeoutSeconds } from './buckets.js';
import { HEADER_CHECK_OUTCOMES, type HeaderCheckOutcome, type HeaderProbe, type Metrics } from './metrics.js';

export const METRIC_PREFIX = 'osm_healthcheck_';

const VERDICTS: readonly Verdict[] = ['success', 'warning', 'failure'];
const HEADER_PROBES: readonly HeaderProbe[] = ['tcpSocket', 'httpGet'];
const LINT_FAILING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export interface MetricsOptions {
  /** The probe table serve runs; undefined: header-driven probes only. */
  table: ProbeTable | undefined;
  /** The companion's version (package.json), for build_info. */
  version: string;
}

interface ProbeSeries {
  runs: Record<Verdict, Counter.Internal>;
  duration: Histogram.Internal<string>;
}

export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  const registers = [registry];
  // Standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...), unprefixed, so the dashboards
  // and alerts written for every other Node.js and Go process work on the companion too.
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters fail `promtool check metrics`; the per-type gauges beside them hold the same counts.
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);

  const runs = new Counter({
    name: `${METRIC_PREFIX}probes_total`,
    help: "Probes run, by probe kind (or healthcheck for header-driven ones), container, handler and kubelet's verdict.",
    labelNames: ['kind', 'container', 'handler', 'verdict'],
    registers,
  });
  const duration = new Histogram({
    name: `${METRIC_PREFIX}probe_duration_seconds`,
    help: 'Time a probe took, from the start of the connect to the verdict.',
    labelNames: ['kind', 'container', 'handler'],
    buckets: durationBuckets(longestTimeoutSeconds(options.table)),
    registers,
  });
  const refused = new Counter({
    name: `${METRIC_PREFIX}probes_refused_total`,
    help: 'Probes refused at once because their listener already had its limit of probes in flight.',
    labelNames: ['listener'],
    registers,
  });
  const inFlight = new Gauge({
    name: `${METRIC_PREFIX}probes_in_flight`,
    help: 'Probes running now, by the listener they came in on.',
    labelNames: ['listener'],
    registers,
  });
  const headerChecks = new Counter({
    name: `${METRIC_PREFIX}header_checks_total`,
    help: 'Requests on /osm-healthcheck by outcome: tcp, http, unwrapped (run), invalid (400), port_not_allowed (403).',
    labelNames: ['outcome'],
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}build_info`,
    help: 'Always 1; the labels say which companion and which Node.js runs.',
    labelNames: ['version', 'node_version'],
    registers,
  }).set({ version: options.version, node_version: process.versions.node }, 1);

  const series = (kind: string, container: string, handler: string): ProbeSeries => {
    const labels = { kind, container, handler };
    const byVerdict = childrenBy(VERDICTS, (verdict) => zeroed(runs.labels({ ...labels, verdict })));
    duration.zero(labels);
    return { runs: byVerdict, duration: duration.labels(labels) };
  };
  const byEntry = new Map<ProbeEntry, ProbeSeries>();
  for (const entry of options.table === undefined ? [] : entries(options.table)) {
    byEntry.set(entry, series(entry.kind, entry.container, entry.handler.type));
  }
  // Header-driven probes name a port, not a container: they are counted together per handler.
  const byHeaderProbe = new Map<HeaderProbe, ProbeSeries>(
    HEADER_PROBES.map((handler) => [handler, series('healthcheck', '', handler)]),
  );
  const refusedBy = childrenBy(LISTENER_ROLES, (listener) => zeroed(refused.labels({ listener })));
  const inFlightBy = childrenBy(LISTENER_ROLES, (listener) => zeroed(inFlight.labels({ listener })));
  const headerChecksBy = childrenBy(HEADER_CHECK_OUTCOMES, (outcome) =>
    zeroed(headerChecks.labels({ outcome })),
  );

  return {
    probeRun(probe, verdict, seconds) {
      const target = typeof probe === 'string' ? byHeaderProbe.get(probe) : byEntry.get(probe);
      if (target === undefined) {
        const name = typeof probe === 'string' ? probe : `${probe.kind}.${probe.container}`;
        throw new Error(`metrics: ${name} is not an entry of the probe table these metrics were made for`);
      }
      target.runs[verdict].inc();
      target.duration.observe(seconds);
    },
    gateRefused: (listener) => refusedBy[listener].inc(),
    inFlight: (listener, delta) => inFlightBy[listener].inc(delta),
    headerCheck: (outcome: HeaderCheckOutcome) => headerChecksBy[outcome].inc(),
    contentType: registry.contentType,
    scrape: () => registry.metrics(),
  };
}

/** prom-client prints a labelled child only once it has a value. */
function zeroed<C extends { inc(value: number): void }>(child: C): C {
  child.inc(0);
  return child;
}

function childrenBy<K extends string, C>(keys: readonly K[], make: (key: K) => C): Record<K, C> {
  return Object.fromEntries(keys.map((key) => [key, make(key)])) as Record<K, C>;
}
