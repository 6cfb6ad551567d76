// The webhook's /metrics, from the built CLI: plain HTTP on --metrics-port, every series at 0 before anything
// happened, admissions posted over real HTTPS counted by outcome and reason with their durations, the serving
// certificate's notAfter, what other paths and methods get, and `promtool check metrics` on the real text. The
// recorder's cache and certificate bookkeeping as a table, with a clock of the test's.

import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookRecorder } from '../../src/webhook/metrics/recorder.js';
import { postAdmission } from '../helpers/admission-post.js';
import { startCli } from '../helpers/cli.js';
import { samples } from '../helpers/exposition.js';
import { PROMTOOL_BIN, promtoolCheckMetrics } from '../helpers/prometheus.js';
import { skipWithout, tool } from '../helpers/system-tools.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';

const FIXTURE = readFileSync(new URL('../fixtures/webhook/tcp-socket.json', import.meta.url), 'utf8');
/** The fixture's review with its pod changed by `change`. */
type Pod = { metadata: { annotations?: Record<string, string> }; spec: { hostNetwork?: boolean } };
function review(change: (pod: Pod) => void): string {
  const body = JSON.parse(FIXTURE);
  change(body.request.object);
  return JSON.stringify(body);
}

describe('the built webhook serves /metrics on its own port', () => {
  let cert: TestCert;
  let webhook: ChildProcess;
  let port: number;
  let metricsPort: number;
  let first: string;

  const get = async (path: string, method = 'GET') => {
    const answer = await fetch(`http://127.0.0.1:${metricsPort}${path}`, { method });
    return { status: answer.status, headers: answer.headers, text: await answer.text() };
  };

  beforeAll(async () => {
    cert = makeTestCert();
    const started = await startCli(
      [
        'webhook',
        '--port=0',
        '--metrics-port=0',
        '--host=127.0.0.1',
        '--admission-timeout=10',
        `--tls-cert=${cert.certFile}`,
        `--tls-key=${cert.keyFile}`,
      ],
      { KUBERNETES_SERVICE_HOST: '' },
      (line) => line.msg === 'webhook serving',
    );
    webhook = started.child;
    port = started.line.port as number;
    metricsPort = started.line.metricsPort as number;
    first = (await get('/metrics')).text;
    const post = (body: string) => postAdmission({ port, ca: cert.cert, body });
    for (let i = 0; i < 3; i++) expect((await post(FIXTURE)).status).toBe(200);
    await post(review((pod) => (pod.spec.hostNetwork = true)));
    await post(review((pod) => (pod.metadata.annotations = { 'osm-healthcheck/rewrite-probes': 'false' })));
    await post(review((pod) => (pod.metadata.annotations = { 'osm-healthcheck/memory-limit': '0' })));
    expect((await post('{"kind": "AdmissionReview"')).status).toBe(400);
  });

  afterAll(async () => {
    if (webhook !== undefined && webhook.exitCode === null) {
      const exited = once(webhook, 'exit');
      webhook.kill('SIGTERM');
      await exited;
    }
    cert?.cleanup();
  });

  it('a port of its own, apart from the HTTPS one', () => {
    expect(metricsPort).toBeGreaterThan(0);
    expect(metricsPort).not.toBe(port);
  });

  it('every admission series is there at 0 before the first admission, and no cache series without an API server', () => {
    const before = samples(first);
    const admissions = [...before].filter(([name]) =>
      name.startsWith('osm_healthcheck_webhook_admissions_total'),
    );
    expect(admissions).toHaveLength(16);
    expect(admissions.every(([, value]) => value === 0)).toBe(true);
    expect(before.get('osm_healthcheck_webhook_admission_duration_seconds_count{outcome="injected"}')).toBe(
      0,
    );
    expect([...before.keys()].filter((name) => name.includes('_cache_'))).toEqual([]);
  });

  it('counts each admission under its outcome and reason, with its duration', async () => {
    const now = samples((await get('/metrics')).text);
    const count = (outcome: string, reason: string) =>
      now.get(`osm_healthcheck_webhook_admissions_total{outcome="${outcome}",reason="${reason}"}`);
    expect(count('injected', 'patched')).toBe(3);
    expect(count('untouched', 'host_network')).toBe(1);
    expect(count('untouched', 'opted_out')).toBe(1);
    expect(count('error', 'invalid_pod')).toBe(1);
    expect(count('error', 'bad_request')).toBe(1);
    expect(now.get('osm_healthcheck_webhook_admission_duration_seconds_count{outcome="injected"}')).toBe(3);
    expect(now.get('osm_healthcheck_webhook_admission_duration_seconds_count{outcome="untouched"}')).toBe(2);
    expect(now.get('osm_healthcheck_webhook_admission_duration_seconds_count{outcome="error"}')).toBe(2);
    expect(
      now.get('osm_healthcheck_webhook_admission_duration_seconds_sum{outcome="injected"}'),
    ).toBeGreaterThan(0);
    // --admission-timeout 10: the last bucket before +Inf.
    expect(
      now.get('osm_healthcheck_webhook_admission_duration_seconds_bucket{outcome="injected",le="10"}'),
    ).toBe(3);
    expect([...now.keys()].some((k) => k.includes('le="25"'))).toBe(false);
    expect(now.get('osm_healthcheck_webhook_admission_timeout_seconds')).toBe(10);
  });

  it("the serving certificate's notAfter, no rotation, build_info", async () => {
    const now = samples((await get('/metrics')).text);
    const notAfter = Date.parse(new X509Certificate(cert.cert).validTo) / 1000;
    expect(
      now.get('osm_healthcheck_webhook_certificate_not_after_timestamp_seconds{certificate="serving"}'),
    ).toBe(notAfter);
    expect(now.has('osm_healthcheck_webhook_certificate_not_after_timestamp_seconds{certificate="ca"}')).toBe(
      false,
    );
    expect(now.get('osm_healthcheck_webhook_certificate_rotations_total')).toBe(0);
    expect(now.get('osm_healthcheck_webhook_ca_bundle_repairs_total')).toBe(0);
    expect([...now.keys()].find((k) => k.startsWith('osm_healthcheck_webhook_build_info'))).toMatch(
      /version="\d+\.\d+\.\d+"/,
    );
    expect(now.has('process_cpu_seconds_total')).toBe(true);
  });

  it.each([
    { name: 'another path', path: '/mutate', method: 'GET', status: 404 },
    { name: 'a POST', path: '/metrics', method: 'POST', status: 405 },
    { name: 'a HEAD', path: '/metrics', method: 'HEAD', status: 200 },
  ])('$name: $status', async ({ path, method, status }) => {
    expect((await get(path, method)).status).toBe(status);
  });

  it.skipIf(
    skipWithout('promtool check metrics of the webhook', [tool('promtool', 'apt-get install prometheus')]),
  )('passes promtool check metrics', async () => {
    expect(PROMTOOL_BIN).toBeDefined();
    const scrape = await get('/metrics');
    expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const { code, output } = await promtoolCheckMetrics(scrape.text);
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});

describe('WebhookRecorder', () => {
  const at = (start: number) => {
    let now = start;
    return { clock: () => now, move: (ms: number) => (now += ms) };
  };

  it('a collection: synced once listed, idle since its last sign of life, lists after the first as relists', () => {
    const time = at(1_000_000);
    const recorder = new WebhookRecorder(5, time.clock);
    expect(recorder.cacheStates()).toEqual([]);
    recorder.watchingCaches();
    time.move(4_000);
    expect(recorder.cacheStates().find((c) => c.resource === 'nodes')).toEqual({
      resource: 'nodes',
      synced: 0,
      idleSeconds: 4,
      relists: 0,
    });
    recorder.cacheActivity('nodes', 'listed');
    time.move(2_000);
    recorder.cacheActivity('nodes', 'event');
    time.move(30_000);
    recorder.cacheActivity('nodes', 'listed');
    recorder.cacheActivity('nodes', 'listed');
    time.move(1_500);
    recorder.cacheActivity('pods', 'listed');
    expect(recorder.cacheStates()).toEqual([
      { resource: 'namespaces', synced: 0, idleSeconds: 37.5, relists: 0 },
      { resource: 'limitranges', synced: 0, idleSeconds: 37.5, relists: 0 },
      { resource: 'resourcequotas', synced: 0, idleSeconds: 37.5, relists: 0 },
      { resource: 'nodes', synced: 1, idleSeconds: 1.5, relists: 2 },
    ]);
    time.move(10_000);
    recorder.cacheActivity('limitranges', 'watch-ended');
    expect(recorder.cacheStates()[1]).toEqual({
      resource: 'limitranges',
      synced: 0,
      idleSeconds: 0,
      relists: 0,
    });
  });

  it('certificates: the first serving one is no rotation, another fingerprint is; the CA once self-managed', () => {
    const recorder = new WebhookRecorder(5);
    recorder.serving('AA', 2_000_000);
    recorder.serving('AA', 2_000_000);
    expect(recorder.certificateRotations()).toBe(0);
    recorder.serving('BB', 3_000_000);
    expect(recorder.certificateRotations()).toBe(1);
    expect(recorder.notAfterSeconds()).toEqual([{ labels: { certificate: 'serving' }, value: 3000 }]);
    recorder.ca(9_000_000);
    recorder.caBundleRepaired();
    expect(recorder.notAfterSeconds()).toEqual([
      { labels: { certificate: 'serving' }, value: 3000 },
      { labels: { certificate: 'ca' }, value: 9000 },
    ]);
    expect(recorder.caBundleRepairs()).toBe(1);
  });

  it('durations land in the buckets up to the timeout, the rest in +Inf only', () => {
    const recorder = new WebhookRecorder(5);
    expect(recorder.bounds).toEqual([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]);
    recorder.admission({ outcome: 'injected', reason: 'patched' }, 0.003);
    recorder.admission({ outcome: 'injected', reason: 'patched' }, 7);
    const injected = recorder.durations()[0];
    expect(injected?.cumulative).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(injected?.count).toBe(2);
    expect(injected?.sumSeconds).toBeCloseTo(7.003);
  });
});
