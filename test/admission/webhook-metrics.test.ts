// The webhook's metrics and deploy/monitoring's alerts against the real thing: a real kube-apiserver (the newest
// of test/helpers/envtest.ts) calls the built webhook, a real Prometheus scrapes the webhook, a built companion and
// that API server every second and evaluates deploy/monitoring/prometheusrule.yaml every second. Admissions made
// through the API server are counted by outcome and reason; on a healthy run no alert fires; then the companion's
// app dies (OsmHealthcheckProbesFailing) and the API server admits pods past an unreachable webhook of ours, by its
// own apiserver_admission_webhook_fail_open_count (OsmHealthcheckWebhookFailingOpen). Alerts with a `for` are seen
// pending (their expression holds on real data); promtool's unit tests cover the waiting.

import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { closedPort, httpApp, type Running } from '../helpers/apps.js';
import { startServe } from '../helpers/cli.js';
import { get } from '../helpers/client.js';
import { type Envtest, envtestNeeds, NEWEST_SERVER, startEnvtest } from '../helpers/envtest.js';
import { makeNamespace, ourContainers, type Pod } from '../helpers/envtest-namespace.js';
import {
  applyRbac,
  type RunningWebhook,
  registerWebhook,
  startWebhook,
  WEBHOOK_USER,
} from '../helpers/envtest-webhook.js';
import { PROMETHEUS_BIN, PROMTOOL_BIN, type Prometheus, startPrometheusWith } from '../helpers/prometheus.js';
import { EXTERNAL_METRICS, ruleGroups } from '../helpers/promql.js';
import { skipWithout, tool } from '../helpers/system-tools.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { until } from '../helpers/until.js';
import { appPod } from './rule-cases.js';

const SKIP = skipWithout('the webhook metrics and alerts with a real kube-apiserver and Prometheus', [
  ...envtestNeeds(NEWEST_SERVER),
  tool('prometheus', 'apt-get install prometheus'),
  tool('promtool', 'apt-get install prometheus'),
]);

const FAILING = 'OsmHealthcheckProbesFailing';
const FAIL_OPEN = 'OsmHealthcheckWebhookFailingOpen';

describe.skipIf(SKIP)('webhook metrics and alerts, with a real kube-apiserver and Prometheus', () => {
  let env: Envtest;
  let cert: TestCert;
  let webhook: RunningWebhook;
  let app: Running<Server> | undefined;
  let companion: ChildProcess | undefined;
  let ports: Record<'liveness' | 'readiness' | 'startup' | 'healthcheck', number>;
  let prometheus: Prometheus | undefined;
  let probing: NodeJS.Timeout | undefined;
  let dir: string;

  beforeAll(async () => {
    expect(PROMETHEUS_BIN && PROMTOOL_BIN).toBeDefined();
    env = await startEnvtest([WEBHOOK_USER], NEWEST_SERVER);
    // Valid a year: a certificate of the tests' two days would rightly be OsmHealthcheckWebhookCertificateExpiring.
    cert = makeTestCert('localhost', ['DNS:localhost', 'IP:127.0.0.1'], 365);
    await applyRbac(env.admin);
    await makeNamespace(env.admin, 'shop', { 'osm-healthcheck-injection': 'enabled' }, []);
    await makeNamespace(env.admin, 'dark', { 'osm-healthcheck-injection': 'unreachable' }, []);
    webhook = await startWebhook(env, cert);
    await registerWebhook(env.admin, 'osm-healthcheck', webhook.url, cert.cert, 'enabled');
    await until(
      'the API server calls the webhook',
      async () => ourContainers(await created('shop', appPod())).includes('osm-healthcheck'),
      webhook.output,
    );

    // A companion probing a live app, asked as kubelet asks it, five times a second.
    app = await httpApp((_req, res) => res.writeHead(200).end());
    const table = {
      liveness: { web: { httpGet: { port: app.port, path: '/live' } } },
      readiness: { web: { tcpSocket: { port: app.port } } },
    };
    const serve = await startServe(table);
    companion = serve.child;
    ports = serve.ports;
    probing = setInterval(() => {
      void get(`http://127.0.0.1:${ports.liveness}/osm-liveness-probe/web`).catch(() => undefined);
      void get(`http://127.0.0.1:${ports.readiness}/osm-readiness-probe/web`).catch(() => undefined);
    }, 200);

    dir = mkdtempSync(join(tmpdir(), 'osm-hc-alerts-'));
    const rules = join(dir, 'rules.yaml');
    writeFileSync(rules, stringify({ groups: ruleGroups() }));
    const apiserver = new URL(env.url);
    prometheus = await startPrometheusWith({
      jobs: [
        { name: 'webhook', targets: [`127.0.0.1:${webhook.metricsPort}`] },
        { name: 'companion', targets: [`127.0.0.1:${ports.healthcheck}`] },
        {
          name: 'apiserver',
          targets: [`127.0.0.1:${apiserver.port}`],
          scheme: 'https',
          caFile: env.caFile,
          tokenFile: env.tokenFile('admin'),
        },
      ],
      ruleFiles: [rules],
    });
    await until('Prometheus scrapes all three targets', async () => {
      const targets = await (prometheus as Prometheus).targets();
      return targets.length === 3 && targets.every((t) => t.health === 'up');
    });
  }, 120_000);

  afterAll(async () => {
    clearInterval(probing);
    await prometheus?.stop();
    if (companion !== undefined && companion.exitCode === null) {
      const exited = once(companion, 'exit');
      companion.kill('SIGINT');
      await exited;
    }
    await app?.close();
    await webhook?.stop();
    cert?.cleanup();
    await env?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function created(namespace: string, pod: Pod): Promise<Pod> {
    const result = await env.admin.dryRunPod(namespace, pod);
    if (!result.admitted) throw new Error(`refused: ${result.message}`);
    return result.object as Pod;
  }

  /** The one value Prometheus has for `promql` now (0 when it has none). */
  async function value(promql: string): Promise<number> {
    const [sample] = await (prometheus as Prometheus).query(promql);
    return sample === undefined ? 0 : Number(sample.value[1]);
  }

  const admissions = (outcome: string, reason: string) =>
    `sum(osm_healthcheck_webhook_admissions_total{outcome="${outcome}",reason="${reason}"})`;

  it('counts the admissions the API server sends, by outcome and reason', async () => {
    const kinds = [
      { outcome: 'injected', reason: 'patched', pod: () => appPod(), times: 3 },
      {
        outcome: 'untouched',
        reason: 'opted_out',
        pod: () => appPod({}, { 'osm-healthcheck/rewrite-probes': 'false' }),
        times: 2,
      },
      { outcome: 'untouched', reason: 'host_network', pod: () => appPod({ hostNetwork: true }), times: 1 },
    ];
    // Once Prometheus has a sample of every series: the values before.
    await until(
      'Prometheus has the admission counters',
      async () => (await value(admissions('injected', 'patched'))) > 0,
    );
    const before = await Promise.all(kinds.map((k) => value(admissions(k.outcome, k.reason))));
    for (const kind of kinds) {
      for (let i = 0; i < kind.times; i++) await created('shop', kind.pod());
    }
    for (const [i, kind] of kinds.entries()) {
      const expected = (before[i] ?? 0) + kind.times;
      await expect
        .poll(() => value(admissions(kind.outcome, kind.reason)), { timeout: 15_000, interval: 250 })
        .toBe(expected);
    }
    expect(await value('sum(osm_healthcheck_webhook_admission_duration_seconds_count)')).toBe(
      await value('sum(osm_healthcheck_webhook_admissions_total)'),
    );
  });

  it("sees every collection listed and the serving certificate's expiry", async () => {
    expect(await value('count(osm_healthcheck_webhook_cache_synced == 1)')).toBe(4);
    const notAfter = await value(
      'osm_healthcheck_webhook_certificate_not_after_timestamp_seconds{certificate="serving"}',
    );
    expect(notAfter - Date.now() / 1000).toBeGreaterThan(300 * 86400);
  });

  it('on a healthy run no alert fires, nor is pending', async () => {
    // Rules evaluated every second over a few seconds of real series.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(await value('count(osm_healthcheck_probes_total{verdict="success"} > 0)')).toBe(2);
    expect(await (prometheus as Prometheus).query('ALERTS')).toEqual([]);
  });

  it('a pod the rewrite refuses: counted as an error, and its alert pending (for 5m)', async () => {
    const before = await value(admissions('error', 'invalid_pod'));
    const pod = await created('shop', appPod({}, { 'osm-healthcheck/memory-limit': '0' }));
    expect(ourContainers(pod)).toEqual([]);
    await expect
      .poll(() => value(admissions('error', 'invalid_pod')), { timeout: 15_000, interval: 250 })
      .toBe(before + 1);
    await expect
      .poll(
        async () =>
          (
            await prometheus?.query(
              'ALERTS{alertname="OsmHealthcheckWebhookAdmissionErrors",alertstate="pending"}',
            )
          )?.map((s) => s.metric.reason),
        { timeout: 15_000, interval: 250 },
      )
      .toEqual(['invalid_pod']);
  });

  it('the API server admits pods past an unreachable webhook of ours: it counts them, and the alert fires', async () => {
    const unreachable = `https://127.0.0.1:${await closedPort()}/mutate`;
    await registerWebhook(env.admin, 'osm-healthcheck-unreachable', unreachable, cert.cert, 'unreachable');
    const name = 'apiserver_admission_webhook_fail_open_count{name="inject.osm-healthcheck.io"}';
    // The API server takes the new configuration up a moment later; every pod is admitted as it came.
    await until('the API server fails open on our webhook', async () => {
      const pod = await created('dark', appPod());
      expect(ourContainers(pod)).toEqual([]);
      return (await value(`sum(${name})`)) > 0;
    });
    await expect
      .poll(
        async () => (await prometheus?.query(`ALERTS{alertname="${FAIL_OPEN}",alertstate="firing"}`))?.length,
        {
          timeout: 15_000,
          interval: 250,
        },
      )
      .toBe(1);
    const [alert] = (await prometheus?.query(`ALERTS{alertname="${FAIL_OPEN}"}`)) ?? [];
    expect(alert?.metric).toMatchObject({ name: 'inject.osm-healthcheck.io', severity: 'critical' });
  });

  it("the API server's series the rules and dashboard name are in its real /metrics", async () => {
    const ours = Object.entries(EXTERNAL_METRICS).filter(([, source]) => source.startsWith('kube-apiserver'));
    expect(ours.length).toBeGreaterThan(0);
    for (const [metric] of ours) {
      expect(await value(`count(${metric}{job="apiserver"})`), metric).toBeGreaterThan(0);
    }
  });

  it("a companion whose app is dead: its probes fail, and the alert's expression holds (pending: for 10m)", async () => {
    await app?.close();
    app = undefined;
    await expect
      .poll(
        async () =>
          (await prometheus?.query(`ALERTS{alertname="${FAILING}",alertstate="pending"}`))?.map(
            (s) => `${s.metric.kind} ${s.metric.handler}`,
          ),
        { timeout: 20_000, interval: 250 },
      )
      .toEqual(expect.arrayContaining(['liveness httpGet', 'readiness tcpSocket']));
  });
});
