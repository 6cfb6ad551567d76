// prom-client's default process and Node.js metrics in a registry, as the companion and the webhook expose them:
// under their standard names, the CPU counted since the process started, less the gauges promtool refuses.

import { type Counter, collectDefaultMetrics, type Registry } from 'prom-client';

const LINT_FAILING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export function processMetrics(registry: Registry): void {
  // Standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...), unprefixed, so the dashboards
  // and alerts written for every other Node.js and Go process work here too. They are tracked from here on: what
  // happened before the first scrape (GC pauses, event-loop lag) is not in them.
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
}
