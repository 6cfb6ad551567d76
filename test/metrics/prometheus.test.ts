// The metrics as a real Prometheus sees them: real probes against loopback peers are recorded, scrape() is served
// from a node:http server on 127.0.0.1:0, a real Prometheus scrapes it every second and answers the series through
// its HTTP API, and `promtool check metrics` finds nothing to complain about.

import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Metrics } from '../../src/metrics/metrics.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { probeBudgetMs } from '../../src/probe/result.js';
import { runProbe } from '../../src/probe/run.js';
import { parseProbeTable } from '../../src/table/parse.js';
import type { ProbeEntry, ProbeTable } from '../../src/table/types.js';
import { closedPort, httpApp, type Running } from '../helpers/apps.js';
import {
  type Prometheus,
  promtoolCheckMetrics,
  skipWithoutPrometheus,
  startPrometheus,
} from '../helpers/prometheus.js';

const SKIP = skipWithoutPrometheus('test/metrics/prometheus.test.ts');

async function probe(metrics: Metrics, entry: ProbeEntry): Promise<void> {
  const started = performance.now();
  const result = await runProbe(entry.handler, {
    host: '127.0.0.1',
    timeoutMs: probeBudgetMs(entry.timeoutSeconds),
  });
  metrics.probeRun(entry, result.verdict, (performance.now() - started) / 1000);
}

describe.skipIf(SKIP)('metrics scraped by a real Prometheus', () => {
  let app: Running<Server>;
  let table: ProbeTable;
  let metrics: Metrics;
  let exporter: Server;
  let prometheus: Prometheus | undefined;

  beforeAll(async () => {
    app = await httpApp((req, res) => {
      res.writeHead(req.url === '/moved' ? 302 : 200).end();
    });
    table = parseProbeTable({
      liveness: { app: { httpGet: { port: app.port, path: '/live' }, timeoutSeconds: 2 } },
      readiness: { app: { httpGet: { port: app.port, path: '/moved' } } },
      startup: { db: { tcpSocket: { port: await closedPort() } } },
    });
    metrics = createMetrics({ table, version: '0.1.0' });
    for (const entry of [...table.liveness.values(), ...table.liveness.values()]) await probe(metrics, entry);
    for (const entry of [...table.readiness.values(), ...table.startup.values()]) await probe(metrics, entry);
    metrics.gateRefused('healthcheck');
    metrics.headerCheck('port_not_allowed');

    exporter = createServer((req, res) => {
      if (req.url !== '/metrics') return res.writeHead(404).end();
      metrics.scrape().then(
        (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        (err: Error) => res.writeHead(500).end(err.message),
      );
    });
    await new Promise<void>((resolve) => exporter.listen(0, '127.0.0.1', resolve));
    const address = exporter.address();
    if (address === null || typeof address === 'string') throw new Error('exporter: no TCP address');
    prometheus = await startPrometheus([`127.0.0.1:${address.port}`]);
  });

  afterAll(async () => {
    await prometheus?.stop();
    await new Promise((resolve) => exporter?.close(resolve));
    await app?.close();
  });

  /** The value Prometheus answers for `promql`, once it has scraped a sample of it. */
  async function answered(promql: string): Promise<number> {
    const p = prometheus as Prometheus;
    try {
      await expect
        .poll(async () => (await p.query(promql)).length, { timeout: 15_000, interval: 200 })
        .toBe(1);
    } catch (err) {
      const targets = JSON.stringify(await p.targets());
      throw new Error(`no sample of ${promql}; scrape targets: ${targets}`, { cause: err });
    }
    const [sample] = await p.query(promql);
    return Number(sample?.value[1]);
  }

  it('scrapes the target', async () => {
    expect(await answered('up{job="osm-healthcheck"}')).toBe(1);
  });

  it.each([
    {
      name: 'two liveness successes',
      promql:
        'osm_healthcheck_probes_total{kind="liveness",container="app",handler="httpGet",verdict="success"}',
      value: 2,
    },
    {
      name: "a 302 as kubelet's warning",
      promql: 'osm_healthcheck_probes_total{kind="readiness",container="app",verdict="warning"}',
      value: 1,
    },
    {
      name: 'a refused TCP connect as a failure',
      promql:
        'osm_healthcheck_probes_total{kind="startup",container="db",handler="tcpSocket",verdict="failure"}',
      value: 1,
    },
    {
      name: 'the durations, all under the 2 s bucket',
      promql: 'osm_healthcheck_probe_duration_seconds_bucket{kind="liveness",container="app",le="2"}',
      value: 2,
    },
    {
      name: 'every probe run, summed over the series',
      promql: 'sum(osm_healthcheck_probe_duration_seconds_count)',
      value: 4,
    },
    {
      name: 'a refusal on the healthcheck listener',
      promql: 'osm_healthcheck_probes_refused_total{listener="healthcheck"}',
      value: 1,
    },
    { name: 'nothing in flight', promql: 'sum(osm_healthcheck_probes_in_flight)', value: 0 },
    {
      name: 'a header check for a port not allowed',
      promql: 'osm_healthcheck_header_checks_total{outcome="port_not_allowed"}',
      value: 1,
    },
    { name: 'build info', promql: 'osm_healthcheck_build_info{version="0.1.0"}', value: 1 },
    { name: 'process metrics', promql: 'count(process_cpu_seconds_total)', value: 1 },
  ])('answers $name', async ({ promql, value }) => {
    expect(await answered(promql)).toBe(value);
  });

  it('passes promtool check metrics', async () => {
    const { code, output } = await promtoolCheckMetrics(await metrics.scrape());
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});
