// The webhook's Prometheus exposition: a prom-client Registry whose series take their values from the
// WebhookRecorder at scrape time, build info, and the default process and Node.js metrics. Imported on the first
// GET /metrics (server.ts), so prom-client is evaluated only once someone scrapes.

import { Gauge, Registry } from 'prom-client';
import { exactHistogram } from '../../metrics/histogram.js';
import { processMetrics } from '../../metrics/process-metrics.js';
import { refilledMetrics } from '../../metrics/refilled.js';
import type { WebhookRecorder } from './recorder.js';

export const WEBHOOK_PREFIX = 'osm_healthcheck_webhook_';

export interface Exposition {
  /** Prometheus' text exposition format 0.0.4. */
  readonly contentType: string;
  metrics(): Promise<string>;
}

export function createWebhookExposition(recorder: WebhookRecorder, version: string): Exposition {
  const registry = new Registry();
  const registers = [registry];
  processMetrics(registry);

  // Refilled from the recorder by their collect() before each scrape.
  const { counter, gauge } = refilledMetrics(registers, WEBHOOK_PREFIX);

  counter(
    'admissions_total',
    'Admission requests answered, by outcome (injected, untouched, error) and its reason.',
    ['outcome', 'reason'],
    () => recorder.admissionCounts(),
  );
  registry.registerMetric(
    exactHistogram(
      `${WEBHOOK_PREFIX}admission_duration_seconds`,
      "Time from an admission request's first byte to its answer, by outcome; buckets up to the API server's timeout.",
      recorder.bounds,
      () => recorder.durations(),
    ),
  );
  gauge(
    'admission_timeout_seconds',
    "The timeoutSeconds the API server gives the webhook (--admission-timeout): the histogram's last bucket.",
    [],
    () => [{ labels: {}, value: recorder.timeoutSeconds }],
  );
  const caches = () => recorder.cacheStates();
  gauge(
    'cache_synced',
    'Whether a watched collection was listed (1) or not yet (0): until then its pods are left untouched.',
    ['resource'],
    () => caches().map((c) => ({ labels: { resource: c.resource }, value: c.synced })),
  );
  gauge(
    'cache_seconds_since_activity',
    'Seconds since a watched collection last showed it is current: a list, an event or bookmark, a watch run to its end.',
    ['resource'],
    () => caches().map((c) => ({ labels: { resource: c.resource }, value: c.idleSeconds })),
  );
  counter(
    'cache_relists_total',
    'Lists of a watched collection after its first: its watch expired (410) or failed and was started again.',
    ['resource'],
    () => caches().map((c) => ({ labels: { resource: c.resource }, value: c.relists })),
  );
  gauge(
    'certificate_not_after_timestamp_seconds',
    'When the serving certificate, and the self-managed CA that signs it, expire (seconds since the epoch).',
    ['certificate'],
    () => recorder.notAfterSeconds(),
  );
  counter(
    'certificate_rotations_total',
    'Serving certificates put in service after the first: renewals, CA rotations, files reloaded.',
    [],
    () => [{ labels: {}, value: recorder.certificateRotations() }],
  );
  counter(
    'ca_bundle_repairs_total',
    'Writes of the caBundle of the MutatingWebhookConfiguration, which did not hold the CAs of the Secret.',
    [],
    () => [{ labels: {}, value: recorder.caBundleRepairs() }],
  );
  new Gauge({
    name: `${WEBHOOK_PREFIX}build_info`,
    help: 'Always 1; the labels say which webhook and which Node.js runs.',
    labelNames: ['version', 'node_version'],
    registers,
  }).set({ version, node_version: process.versions.node }, 1);

  return { contentType: registry.contentType, metrics: () => registry.metrics() };
}
