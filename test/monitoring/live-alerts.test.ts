// The companion's alerts in a real Prometheus: three built companions (dist/cli.mjs serve) probe a loopback app as
// kubelet would, each scraped as deploy/monitoring/podmonitor.yaml would label it (namespace, pod), beside a
// stand-in for kube-state-metrics that serves its restart counters as text. web-slow's readiness probe answers in
// 0.82 s of its 1 s; web-failing's liveness probe fails and kube-state-metrics then counts a restart of that
// container; web-sound's probes pass fast. With deploy/monitoring's rules evaluated every second,
// OsmHealthcheckProbeNearTimeout goes pending on web-slow alone (its `for: 15m` is promtool's to wait out,
// test/fixtures/monitoring/alerts.test.yaml), OsmHealthcheckLivenessRestarts fires on web-failing alone, and
// web-sound has no alert at all.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { httpApp, type Running } from '../helpers/apps.js';
import { startServe } from '../helpers/cli.js';
import { get } from '../helpers/client.js';
import { pastFreshWindow } from '../helpers/next-check.js';
import { type Prometheus, skipWithoutPrometheus, startPrometheusWith } from '../helpers/prometheus.js';
import { ruleGroups } from '../helpers/promql.js';
import { until } from '../helpers/until.js';

const SKIP = skipWithoutPrometheus('test/monitoring/live-alerts.test.ts');
const PODS = ['web-slow', 'web-failing', 'web-sound'] as const;
type Pod = (typeof PODS)[number];
/** How slow web-slow's readiness endpoint is, against its timeoutSeconds of 1 (a probe budget of 900 ms). */
const SLOW_MS = 820;
/** Runs of each probe: past the alert's 30, so the sound one is judged by its latency, not by too few runs. */
const RUNS = 36;

/** The probe table of each pod's companion: paths of the one app, chosen per pod. */
const TABLES: Record<Pod, object> = {
  'web-slow': {
    liveness: { app: { httpGet: { port: 0, path: '/ok' }, timeoutSeconds: 1 } },
    readiness: { app: { httpGet: { port: 0, path: '/slow' }, timeoutSeconds: 1 } },
  },
  'web-failing': {
    liveness: { app: { httpGet: { port: 0, path: '/fail' }, timeoutSeconds: 1 } },
    readiness: { app: { httpGet: { port: 0, path: '/ok' }, timeoutSeconds: 1 } },
  },
  'web-sound': {
    liveness: { app: { httpGet: { port: 0, path: '/ok' }, timeoutSeconds: 1 } },
    readiness: { app: { httpGet: { port: 0, path: '/ok' }, timeoutSeconds: 1 } },
  },
};

/** kube-state-metrics' pod series, as its /metrics writes them: each app container's restarts. */
function kubeStateMetrics(restartsOfFailing: number): string {
  const labels = (pod: Pod) => `namespace="shop",pod="${pod}",container="app",uid="uid-${pod}"`;
  const restarts = (pod: Pod) => (pod === 'web-failing' ? restartsOfFailing : 0);
  return [
    '# HELP kube_pod_container_status_restarts_total The number of container restarts per container.',
    '# TYPE kube_pod_container_status_restarts_total counter',
    ...PODS.map((pod) => `kube_pod_container_status_restarts_total{${labels(pod)}} ${restarts(pod)}`),
    '# HELP kube_pod_container_status_last_terminated_reason Describes the last reason the container was in terminated state.',
    '# TYPE kube_pod_container_status_last_terminated_reason gauge',
    ...(restartsOfFailing > 0
      ? [`kube_pod_container_status_last_terminated_reason{${labels('web-failing')},reason="Error"} 1`]
      : []),
    '',
  ].join('\n');
}

/**
 * `runs` kubelet-like GETs of `url`, one after another (a new connection each, as kubelet's), each past the last
 * one's check as kubelet's period always is, so each runs a check of its own (src/server/shared-checks.ts).
 */
async function probe(url: string, runs: number): Promise<void> {
  for (let i = 0; i < runs; i++) {
    await get(url);
    await pastFreshWindow();
  }
}

describe.skipIf(SKIP)("the companion's alerts, in a real Prometheus scraping real companions", () => {
  let app: Running<Server> | undefined;
  let ksm: Running<Server> | undefined;
  let restartsOfFailing = 0;
  const companions = new Map<Pod, Awaited<ReturnType<typeof startServe>>>();
  let prometheus: Prometheus | undefined;
  let dir: string | undefined;

  const url = (pod: Pod, kind: 'liveness' | 'readiness') =>
    `http://127.0.0.1:${companions.get(pod)?.ports[kind]}/osm-${kind}-probe/app`;

  beforeAll(async () => {
    app = await httpApp((req, res) => {
      if (req.url === '/slow') setTimeout(() => res.writeHead(200).end(), SLOW_MS);
      else res.writeHead(req.url === '/fail' ? 500 : 200).end();
    });
    const port = app.port;
    ksm = await httpApp((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
        .end(kubeStateMetrics(restartsOfFailing));
    });
    for (const pod of PODS) {
      const table = JSON.parse(JSON.stringify(TABLES[pod]).replaceAll('"port":0', `"port":${port}`));
      companions.set(pod, await startServe(table));
    }

    dir = mkdtempSync(join(tmpdir(), 'osm-hc-live-alerts-'));
    const rules = join(dir, 'rules.yaml');
    writeFileSync(rules, stringify({ groups: ruleGroups() }));
    prometheus = await startPrometheusWith({
      jobs: [
        ...PODS.map((pod) => ({
          name: `companion-${pod}`,
          targets: [`127.0.0.1:${companions.get(pod)?.ports.healthcheck}`],
          labels: { namespace: 'shop', pod },
        })),
        { name: 'kube-state-metrics', targets: [`127.0.0.1:${ksm.port}`] },
      ],
      ruleFiles: [rules],
    });
    const p = prometheus;
    await until('Prometheus scrapes the three companions and kube-state-metrics', async () => {
      const targets = await p.targets();
      return targets.length === PODS.length + 1 && targets.every((t) => t.health === 'up');
    });

    // kubelet's probes: every probe of every pod, RUNS times (web-slow's readiness 0.82 s each).
    await Promise.all(
      PODS.flatMap((pod) => [probe(url(pod, 'liveness'), RUNS), probe(url(pod, 'readiness'), RUNS)]),
    );
    // Once Prometheus has seen web-failing's liveness failures, kubelet restarts its app container.
    await until('Prometheus sees the failed liveness probes', async () => {
      const failed = await p.query(
        'osm_healthcheck_probes_total{pod="web-failing",kind="liveness",verdict="failure"}',
      );
      return Number(failed[0]?.value[1]) === RUNS;
    });
    restartsOfFailing = 1;
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    for (const companion of companions.values()) await companion.stop();
    await app?.close();
    await ksm?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** The alerts of this name in this state, as `pod kind container` (kind absent where the alert has none). */
  async function alerts(name: string, state: 'pending' | 'firing'): Promise<string[]> {
    const found = await (prometheus as Prometheus).query(`ALERTS{alertname="${name}",alertstate="${state}"}`);
    return found
      .map((s) => [s.metric.pod, s.metric.kind, s.metric.container].filter(Boolean).join(' '))
      .sort();
  }

  it("the companions' timeouts are in Prometheus, and every run of web-slow's readiness past 0.8 of its", async () => {
    const p = prometheus as Prometheus;
    const timeouts = await p.query('osm_healthcheck_probe_timeout_seconds{kind="readiness"}');
    expect(timeouts.map((s) => [s.metric.pod, s.value[1]]).sort()).toEqual(
      PODS.map((pod) => [pod, '1']).sort(),
    );
    const bucket = await p.query(
      'osm_healthcheck_probe_duration_seconds_bucket{pod="web-slow",kind="readiness",le="0.8"}',
    );
    expect(bucket.map((s) => s.value[1])).toEqual(['0']);
  });

  it('OsmHealthcheckProbeNearTimeout goes pending on the slow readiness probe, and on no other', async () => {
    await expect
      .poll(() => alerts('OsmHealthcheckProbeNearTimeout', 'pending'), { timeout: 15_000, interval: 250 })
      .toEqual(['web-slow readiness app']);
    expect(await alerts('OsmHealthcheckProbeNearTimeout', 'firing')).toEqual([]);
  });

  it('OsmHealthcheckLivenessRestarts fires on the container restarted while its liveness probe failed, alone', async () => {
    await expect
      .poll(() => alerts('OsmHealthcheckLivenessRestarts', 'firing'), { timeout: 15_000, interval: 250 })
      .toEqual(['web-failing app']);
    const [alert] = await (prometheus as Prometheus).query(
      'ALERTS_FOR_STATE{alertname="OsmHealthcheckLivenessRestarts"}',
    );
    expect(alert?.metric).toMatchObject({ namespace: 'shop', pod: 'web-failing', container: 'app' });
  });

  it('the sound workload has no alert at all', async () => {
    // Both alerts above have been evaluated on all three by now; web-sound never matched either.
    expect(await (prometheus as Prometheus).query('ALERTS{pod="web-sound"}')).toEqual([]);
  });
});
