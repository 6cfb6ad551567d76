// Every PromQL expression of deploy/monitoring (the alerting rules and the dashboard's panels) parses with
// Prometheus' own parser (promtool), and every metric it selects is one a real scrape of the built companion or
// the built webhook gives, or one of the kube-state-metrics and API server series named below with their source
// (test/admission/webhook-metrics.test.ts finds the API server's in a real kube-apiserver's /metrics).

import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVersionStandin, type VersionStandin, versionBody } from '../helpers/api-server.js';
import { ROOT, startCli, startServe } from '../helpers/cli.js';
import { kubeEnv } from '../helpers/kube-standin.js';
import { skipWithoutPrometheus } from '../helpers/prometheus.js';
import {
  allQueries,
  checkQueries,
  dashboardQueries,
  EXTERNAL_METRICS,
  exposedNames,
  metricNames,
} from '../helpers/promql.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';

describe('docs/monitoring.md', () => {
  it('names every outside series the rules and the dashboard use, with where it comes from', () => {
    const page = readFileSync(join(ROOT, 'docs/monitoring.md'), 'utf8');
    for (const name of Object.keys(EXTERNAL_METRICS)) {
      expect(page, name).toContain(`\`${name.replace(/_bucket$/, '')}\``);
    }
  });
});

describe('metricNames', () => {
  it.each([
    { expr: 'up', names: ['up'] },
    {
      expr: 'sum by (kind, handler) (rate(osm_healthcheck_probes_total{verdict="failure"}[5m])) / sum by (kind) (rate(x_total[5m]))',
      names: ['osm_healthcheck_probes_total', 'x_total'],
    },
    {
      expr: 'histogram_quantile(0.99, sum by (le) (rate(a_bucket{name=~"(inject|warn)\\\\.x"}[5m]))) > 0.5 * max by (namespace) (b)',
      names: ['a_bucket', 'b'],
    },
    { expr: 'a == 0 or b > bool 900 unless on (pod) group_left (x) c offset 5m', names: ['a', 'b', 'c'] },
    { expr: 'min(a) - time() < 7 * 86400', names: ['a'] },
    { expr: '(sum(a) or 0 * group by (namespace) (b)) == 0', names: ['a', 'b'] },
    { expr: 'label_replace(a, "dst", "$1", "src", "(.*)")', names: ['a'] },
    { expr: 'vector(1) + scalar(ns:rule:sum)', names: ['ns:rule:sum'] },
  ])('$expr', ({ expr, names }) => {
    expect(metricNames(expr)).toEqual(names);
  });
});

describe.skipIf(skipWithoutPrometheus('test/monitoring/queries.test.ts'))(
  "deploy/monitoring's PromQL against real scrapes",
  () => {
    let companion: ChildProcess | undefined;
    let webhook: ChildProcess | undefined;
    let api: VersionStandin | undefined;
    let cert: TestCert | undefined;
    const exposed = new Set<string>();

    const stop = async (child: ChildProcess | undefined) => {
      if (child === undefined || child.exitCode !== null) return;
      const exited = once(child, 'exit');
      // SIGINT: serve stops without waiting for an app (test/metrics/prometheus.test.ts does the same).
      child.kill('SIGINT');
      await exited;
    };

    beforeAll(async () => {
      const table = {
        liveness: { app: { httpGet: { port: 1, path: '/live' } } },
        readiness: { app: { tcpSocket: { port: 1 } } },
        startup: { app: { grpc: { port: 1 } } },
      };
      const serve = await startServe(table);
      companion = serve.child;
      const ports = serve.ports;
      const companionText = await (await fetch(`http://127.0.0.1:${ports.healthcheck}/metrics`)).text();

      // The webhook with an API server, so its caches are there: a stand-in that serves the four collections.
      cert = makeTestCert();
      api = await startVersionStandin(versionBody('33'));
      const hook = await startCli(
        ['webhook', '--port=0', '--metrics-port=0', '--host=127.0.0.1'],
        { OSM_HEALTHCHECK_TLS_CERT: cert.certFile, OSM_HEALTHCHECK_TLS_KEY: cert.keyFile, ...kubeEnv(api) },
        (line) => line.msg === 'webhook serving',
      );
      webhook = hook.child;
      const webhookText = await (
        await fetch(`http://127.0.0.1:${String(hook.line.metricsPort)}/metrics`)
      ).text();
      for (const name of [...exposedNames(companionText), ...exposedNames(webhookText)]) exposed.add(name);
    });

    afterAll(async () => {
      await stop(companion);
      await stop(webhook);
      await api?.close();
      cert?.cleanup();
    });

    it('has queries: every alert and every panel target', () => {
      expect(allQueries().length).toBeGreaterThanOrEqual(9 + 15);
      expect(dashboardQueries().every((q) => !q.expr.includes('$'))).toBe(true);
    });

    it('every query parses (promtool check rules of each as a recording rule)', () => {
      const queries = allQueries();
      const { code, output } = checkQueries(queries);
      expect(output).toContain(`SUCCESS: ${queries.length} rules found`);
      expect(code).toBe(0);
    });

    it('a query that does not parse fails that check, naming it', () => {
      const { code, output } = checkQueries([{ where: 'x', expr: 'sum by (kind (rate(x[5m]))' }]);
      expect(code).not.toBe(0);
      expect(output).toMatch(/parse error/);
    });

    it("the scrapes give the companion's and the webhook's series (cache series included)", () => {
      for (const name of [
        'osm_healthcheck_probes_total',
        'osm_healthcheck_probe_duration_seconds_bucket',
        'osm_healthcheck_webhook_admissions_total',
        'osm_healthcheck_webhook_cache_synced',
        'osm_healthcheck_webhook_cache_seconds_since_activity',
      ]) {
        expect(exposed.has(name), name).toBe(true);
      }
    });

    it('every metric a query selects is exposed by a real scrape, or named with its source', () => {
      const unknown = allQueries().flatMap((q) =>
        metricNames(q.expr)
          .filter((name) => !exposed.has(name) && EXTERNAL_METRICS[name] === undefined)
          .map((name) => `${q.where}: ${name}`),
      );
      expect(unknown).toEqual([]);
    });

    it('the list of outside series holds only what some query uses and neither of ours exposes', () => {
      const used = new Set(allQueries().flatMap((q) => metricNames(q.expr)));
      for (const name of Object.keys(EXTERNAL_METRICS)) {
        expect(used.has(name), `${name} is used`).toBe(true);
        expect(exposed.has(name), `${name} is not ours`).toBe(false);
      }
    });
  },
);
