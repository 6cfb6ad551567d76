// `analyze --probes --prometheus` on live data: real companions (the built CLI's serve, one per pod, each with its
// pod's table) probe real loopback apps (a fast one, one answering readiness in ~850 ms against timeoutSeconds 1,
// one failing liveness with 500), the test plays kubelet, a real Prometheus scrapes each companion with the
// `namespace` and `pod` labels the PodMonitor gives it, and a real kube-apiserver holds the pods (one restarted,
// in its status). The near-timeout and the failing workloads are named with their rules, the sound one is not,
// and the liveness restarts make the run exit 1.

import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApp, type Running } from '../../helpers/apps.js';
import { startServe } from '../../helpers/cli.js';
import { get } from '../../helpers/client.js';
import { ENVTEST_NEEDS, type Envtest } from '../../helpers/envtest.js';
import { pastFreshWindow } from '../../helpers/next-check.js';
import { type Prometheus, skipWithoutPrometheus, startPrometheusWith } from '../../helpers/prometheus.js';
import { skipWithout } from '../../helpers/system-tools.js';
import { until } from '../../helpers/until.js';
import { type ProbesCluster, probesCluster, writeRestart } from './probes-cluster.js';

type Json = Record<string, unknown>;
const NS = 'live';
const PROBES = 40;

const skip =
  skipWithoutPrometheus('analyze --probes --prometheus') ||
  skipWithout('analyze --probes --prometheus', ENVTEST_NEEDS);

describe.skipIf(skip)('analyze --probes with a real Prometheus scraping real companions', () => {
  let cluster: ProbesCluster;
  let env: Envtest;
  let app: Running<Server>;
  let prometheus: Prometheus | undefined;
  const companions: { stop(): Promise<void> }[] = [];

  /** Each workload's table: what its companion runs, against the loopback app. */
  const tables = (port: number): Record<string, Json> => ({
    sound: {
      readiness: { app: { httpGet: { port, path: '/ready' }, timeoutSeconds: 1 } },
      liveness: { app: { httpGet: { port, path: '/live' }, timeoutSeconds: 1 } },
    },
    slow: {
      readiness: { app: { httpGet: { port, path: '/slow' }, timeoutSeconds: 1 } },
      liveness: { app: { httpGet: { port, path: '/live' }, timeoutSeconds: 1 } },
    },
    failing: {
      readiness: { app: { httpGet: { port, path: '/ready' }, timeoutSeconds: 1 } },
      liveness: { app: { httpGet: { port, path: '/fail' }, timeoutSeconds: 1 } },
    },
  });

  /** The pod spec the webhook writes: kubelet asks the companion, which holds the table. */
  const podSpec = (table: Json): Json => ({
    containers: [
      {
        name: 'app',
        image: 'app',
        readinessProbe: { httpGet: { path: '/osm-readiness-probe/app', port: 15902 }, timeoutSeconds: 1 },
        livenessProbe: { httpGet: { path: '/osm-liveness-probe/app', port: 15901 }, timeoutSeconds: 1 },
      },
      {
        name: 'osm-healthcheck',
        image: 'osm-healthcheck',
        args: ['serve'],
        env: [{ name: 'OSM_HEALTHCHECK_PROBES', value: JSON.stringify(table) }],
      },
    ],
  });

  beforeAll(async () => {
    app = await httpApp((req, res) => {
      if (req.url === '/slow') setTimeout(() => res.writeHead(200).end(), 850);
      else res.writeHead(req.url === '/fail' ? 500 : 200).end();
    });
    cluster = await probesCluster(NS);
    env = cluster.env;
    const jobs = [];
    const kubelet: (() => Promise<unknown>)[] = [];
    for (const [name, table] of Object.entries(tables(app.port))) {
      const labels = { app: name };
      const rs = await env.admin.create(`/apis/apps/v1/namespaces/${NS}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name },
        spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec(table) } },
      });
      const owner = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name,
        uid: (rs.metadata as Json).uid,
        controller: true,
      };
      for (const i of name === 'failing' ? [0, 1] : [0]) {
        const pod = `${name}-${i}`;
        await env.admin.create(`/api/v1/namespaces/${NS}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: pod, labels, ownerReferences: [owner] },
          spec: podSpec(table),
        });
        const started = await startServe(table);
        companions.push(started);
        const { ports } = started;
        jobs.push({ name: pod, targets: [`127.0.0.1:${ports.healthcheck}`], labels: { namespace: NS, pod } });
        for (const kind of ['readiness', 'liveness'] as const) {
          kubelet.push(() => get(`http://127.0.0.1:${ports[kind]}/osm-${kind}-probe/app`));
        }
      }
    }
    // Kubelet's record of the liveness restarts of one failing replica.
    await writeRestart(env, NS, 'failing-0');
    prometheus = await startPrometheusWith({ jobs });
    await until('Prometheus scrapes every companion', async () => {
      const up = await (prometheus as Prometheus).query('up == 1');
      return up.length === jobs.length;
    });
    // Kubelet's probes: PROBES of each kind to each companion, one after another and each past the last one's check
    // (src/server/shared-checks.ts), as kubelet's period always is.
    const chain = async (probe: () => Promise<unknown>) => {
      for (let i = 0; i < PROBES; i++) {
        await probe();
        await pastFreshWindow();
      }
    };
    await Promise.all(kubelet.map((probe) => chain(probe)));
    await until('Prometheus has scraped every probe', async () => {
      const counted = await (prometheus as Prometheus).query(
        'sum(osm_healthcheck_probe_duration_seconds_count{kind!="healthcheck"})',
      );
      return Number(counted[0]?.value[1]) === kubelet.length * PROBES;
    });
  }, 180_000);

  afterAll(async () => {
    for (const companion of companions) await companion.stop();
    await prometheus?.stop();
    await app?.close();
    await cluster?.stop();
  });

  it('names the near-timeout and the failing workloads with their rules and the evidence, and exits 1', async () => {
    const url = (prometheus as Prometheus).url;
    const exit = await cluster.analyze('--prometheus', url, '--window', '5m', '-o', 'json');
    const report = JSON.parse(exit.stdout) as {
      source: string;
      needsAction: boolean;
      workloads: { name: string; findings: { rule: string; evidence: string; fix: string | null }[] }[];
    };
    const rules = Object.fromEntries(report.workloads.map((w) => [w.name, w.findings.map((f) => f.rule)]));
    expect(rules, exit.stdout).toEqual({
      sound: [],
      slow: ['near-timeout'],
      failing: ['liveness-restarts', 'shared-dependency'],
    });
    const evidence = Object.fromEntries(
      report.workloads.flatMap((w) => w.findings.map((f) => [`${w.name} ${f.rule}`, f.evidence])),
    );
    expect(evidence['slow near-timeout']).toMatch(
      /^readiness p99 \d+ ms \(pod slow-0\) against timeoutSeconds 1 over the last 5m, \d+ timeouts? in \d+ probes$/,
    );
    // increase() over the window extrapolates Prometheus' samples: the counts are near the 80 probes, not exact.
    // No kube-state-metrics here: the restarts are the pod's own count, from its status.
    expect(evidence['failing liveness-restarts']).toMatch(
      /^3 restarts of app on 1 pod \(restartCount, the last ended \d\d:\d\d UTC: Error, exit 137\), and (\d+) liveness failures in \1 probes over the last 5m: \1 status$/,
    );
    expect(evidence['failing shared-dependency']).toMatch(
      /^liveness failed on all 2 replicas in 1 of 1 steps over the last 5m/,
    );
    expect(report.needsAction).toBe(true);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('a liveness probe restarted pods within the window');
  });
});
