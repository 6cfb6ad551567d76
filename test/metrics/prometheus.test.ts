// The metrics as a real Prometheus sees them: the built companion (dist/cli.mjs serve, on ephemeral loopback ports)
// answers kubelet-like probes of loopback peers and some hostile requests, a real Prometheus scrapes its /metrics
// every second and answers the series through its HTTP API, and `promtool check metrics` finds nothing in them.

import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, httpApp, type Running } from '../helpers/apps.js';
import { type ServePorts, startServe } from '../helpers/cli.js';
import { get, raw } from '../helpers/client.js';
import { pastFreshWindow } from '../helpers/next-check.js';
import {
  type Prometheus,
  promtoolCheckMetrics,
  skipWithoutPrometheus,
  startPrometheus,
} from '../helpers/prometheus.js';

const SKIP = skipWithoutPrometheus('test/metrics/prometheus.test.ts');

/** The set of osm_healthcheck_* series (name and labels, no values) in a scrape. */
function companionSeries(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('osm_healthcheck_'))
    .map((line) => line.slice(0, line.lastIndexOf(' ')))
    .sort();
}

describe.skipIf(SKIP)('metrics of the built companion, scraped by a real Prometheus', () => {
  let app: Running<Server>;
  let companion: Awaited<ReturnType<typeof startServe>> | undefined;
  let ports: ServePorts;
  let prometheus: Prometheus | undefined;
  let before: string[];
  let after: string[];

  const url = (role: keyof typeof ports, path: string) => `http://127.0.0.1:${ports[role]}${path}`;

  beforeAll(async () => {
    app = await httpApp((req, res) => {
      res.writeHead(req.url === '/moved' ? 302 : 200).end();
    });
    const table = {
      liveness: { app: { httpGet: { port: app.port, path: '/live' }, timeoutSeconds: 2 } },
      // web: the tcpSocket probe a header-driven TCP connect may run (a header names only the table's probes).
      readiness: {
        app: { httpGet: { port: app.port, path: '/moved' } },
        web: { tcpSocket: { port: app.port } },
      },
      startup: { db: { tcpSocket: { port: await closedPort() } } },
    };
    companion = await startServe(table);
    ports = companion.ports;

    // What kubelet sends (test/helpers/client.ts: kube-probe User-Agent, a new connection each).
    // Each past the last one's check (src/server/shared-checks.ts), as kubelet's period always is.
    for (let i = 0; i < 2; i++) {
      await pastFreshWindow();
      expect((await get(url('liveness', '/osm-liveness-probe/app'))).status).toBe(200);
    }
    expect((await get(url('readiness', '/osm-readiness-probe/app'))).status).toBe(302);
    expect((await get(url('startup', '/osm-startup-probe/db'))).status).toBe(503);
    const tcp = { 'Original-Tcp-Port': String(app.port) };
    expect((await get(url('healthcheck', '/osm-healthcheck'), tcp)).status).toBe(200);
    const http = { 'Original-Http-Port': String(app.port), 'Original-Http-Path': '/live' };
    expect((await get(url('healthcheck', '/osm-healthcheck'), http)).status).toBe(200);
    expect((await get(url('healthcheck', '/osm-healthcheck'), { 'Original-Tcp-Port': '1' })).status).toBe(
      403,
    );
    // osm-edge's injector wrapping one of the companion's own probes (docs/architecture.md#what-kubelet-receives): liveness app, run again.
    const wrap = { 'Original-Http-Port': '15901', 'Original-Http-Path': '/osm-liveness-probe/app' };
    await pastFreshWindow();
    expect((await get(url('healthcheck', '/osm-healthcheck'), wrap)).status).toBe(200);

    // Hostile requests: their paths and headers must not become label values.
    before = companionSeries((await get(url('healthcheck', '/metrics'))).body);
    const hostile: Array<[keyof typeof ports, string, Record<string, string>]> = [
      ['liveness', '/osm-liveness-probe/evil%22%7D%201', {}],
      ['liveness', '/osm-liveness-probe/x-attacker', { 'User-Agent': 'kube-probe/9.9"}' }],
      ['readiness', '/osm-readiness-probe/app/evil', { 'X-Container': 'evil' }],
      ['healthcheck', '/osm-healthcheck', { 'Original-Tcp-Port': 'evil"}' }],
      [
        'healthcheck',
        '/osm-healthcheck',
        { 'Original-Http-Port': String(app.port), 'Original-Http-Path': '/"}' },
      ],
      ['healthcheck', '/osm-healthcheck', { 'Original-Http-Port': '15901', 'Original-Http-Path': '/evil' }],
      ['healthcheck', '/metrics?kind=evil', { 'X-Forwarded-For': 'evil' }],
      ['startup', '/metrics', {}],
      ['healthcheck', '/osm-evil-probe/app', {}],
    ];
    for (const [role, path, headers] of hostile) await get(url(role, path), headers);
    await raw(
      ports.healthcheck,
      'GET /osm-healthcheck HTTP/1.1\r\nHost: x\r\nOriginal-Tcp-Port: 1\r\nOriginal-Tcp-Port: 2\r\nConnection: close\r\n\r\n',
    );
    after = companionSeries((await get(url('healthcheck', '/metrics'))).body);

    prometheus = await startPrometheus([`127.0.0.1:${ports.healthcheck}`]);
  });

  afterAll(async () => {
    await prometheus?.stop();
    await companion?.stop();
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
      name: 'three liveness successes, one through the wrap',
      promql:
        'osm_healthcheck_probes_total{kind="liveness",container="app",handler="httpGet",verdict="success"}',
      value: 3,
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
      name: 'a header-driven TCP connect',
      promql:
        'osm_healthcheck_probes_total{kind="healthcheck",container="",handler="tcpSocket",verdict="success"}',
      value: 1,
    },
    {
      name: 'a header-driven GET of a table probe (the hostile path, refused, is no label)',
      promql:
        'osm_healthcheck_probes_total{kind="healthcheck",container="",handler="httpGet",verdict="success"}',
      value: 1,
    },
    {
      name: 'the liveness durations, all under the 2 s bucket',
      promql: 'osm_healthcheck_probe_duration_seconds_bucket{kind="liveness",container="app",le="2"}',
      value: 3,
    },
    {
      name: 'no bucket past the longest timeout but +Inf',
      promql:
        'count(osm_healthcheck_probe_duration_seconds_bucket{kind="liveness",container="app",le="2.5"})',
      value: 0,
    },
    {
      name: 'a duration sum of real time',
      promql: 'osm_healthcheck_probe_duration_seconds_sum{kind="liveness",container="app"} > bool 0',
      value: 1,
    },
    {
      name: 'every probe run, summed over the series',
      promql: 'sum(osm_healthcheck_probe_duration_seconds_count)',
      value: 7,
    },
    {
      name: "the bounds 0.5, 0.8 and 0.9 of liveness' 2 s timeout",
      promql:
        'count(osm_healthcheck_probe_duration_seconds_bucket{kind="liveness",container="app",le=~"1|1.6|1.8"})',
      value: 3,
    },
    {
      name: 'the refused TCP connect under its reason',
      promql:
        'osm_healthcheck_probe_failures_total{kind="startup",container="db",handler="tcpSocket",reason="refused"}',
      value: 1,
    },
    { name: 'no other failure', promql: 'sum(osm_healthcheck_probe_failures_total)', value: 1 },
    {
      name: 'every reason of every probe series, from the first scrape',
      // Four table entries and the two header-driven series, eight reasons each.
      promql: 'count(osm_healthcheck_probe_failures_total)',
      value: 6 * 8,
    },
    {
      name: "liveness' timeout as the table holds it",
      promql: 'osm_healthcheck_probe_timeout_seconds{kind="liveness",container="app",handler="httpGet"}',
      value: 2,
    },
    {
      name: 'the timeout of each table entry, none for header-driven probes',
      promql: 'count(osm_healthcheck_probe_timeout_seconds)',
      value: 4,
    },
    {
      name: 'a first success of liveness and of readiness (a warning), none of the failing startup',
      promql:
        'count(osm_healthcheck_probe_first_success_seconds{kind=~"liveness|readiness",container="app"})',
      value: 2,
    },
    {
      name: 'a first success timed from the first request, as a short positive time',
      promql: 'osm_healthcheck_probe_first_success_seconds{kind="liveness"} > bool 0',
      value: 1,
    },
    { name: 'nothing in flight', promql: 'sum(osm_healthcheck_probes_in_flight)', value: 0 },
    {
      name: 'a header check that ran a TCP connect',
      promql: 'osm_healthcheck_header_checks_total{outcome="tcp"}',
      value: 1,
    },
    {
      name: 'header checks for no probe of the table: a port, a hostile path',
      promql: 'osm_healthcheck_header_checks_total{outcome="port_not_allowed"}',
      value: 2,
    },
    {
      name: 'malformed header checks: a bad port, a wrap of no probe path, a repeated header',
      promql: 'osm_healthcheck_header_checks_total{outcome="invalid"}',
      value: 3,
    },
    {
      name: 'a header check that ran a GET',
      promql: 'osm_healthcheck_header_checks_total{outcome="http"}',
      value: 1,
    },
    {
      name: 'a wrap of a companion path, unwrapped',
      promql: 'osm_healthcheck_header_checks_total{outcome="unwrapped"}',
      value: 1,
    },
    {
      name: 'build info',
      promql: 'osm_healthcheck_build_info{version=~"\\\\d+\\\\.\\\\d+\\\\.\\\\d+"}',
      value: 1,
    },
    { name: 'process metrics', promql: 'count(process_cpu_seconds_total)', value: 1 },
  ])('answers $name', async ({ promql, value }) => {
    const answer = await answered(value === 0 ? `${promql} or vector(0)` : promql);
    expect(answer).toBe(value);
  });

  it('grows no series from request paths or headers', () => {
    expect(after).toEqual(before);
    expect(after.join('\n')).not.toMatch(/evil|attacker|9\.9/);
  });

  it('passes promtool check metrics', async () => {
    const scrape = await get(url('healthcheck', '/metrics'));
    expect(scrape.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const { code, output } = await promtoolCheckMetrics(scrape.body);
    expect(output).toBe('');
    expect(code).toBe(0);
  });

  it.each(['liveness', 'readiness', 'startup'] as const)(
    'answers /metrics with 404 on the %s port, listing only its own paths',
    async (role) => {
      const answer = await get(url(role, '/metrics'));
      expect(answer.status).toBe(404);
      expect(answer.body).toMatch(/^no such path "\/metrics" on this port; paths: /);
      expect(answer.body).not.toMatch(/paths: .*\/metrics/);
    },
  );
});
