// `analyze --probes --companion-metrics` through the real kube-apiserver's pod proxy. The proxy refuses loopback
// pod IPs, so the companion (the built CLI's serve, on its real ports 15901-15904) runs in a network namespace this
// test creates, joined to the host by a veth pair with private addresses inside it only; two replicas' status.podIP
// is that address, written through the status subresource with the restarts kubelet recorded, within a minute of
// each other. The test plays kubelet against the companion's liveness port (the app behind it refuses), then
// analyze reads the companion's /metrics through the API server and names the liveness restarts and, with no time
// steps, the shared dependency, exit 1. Root only: skips loudly otherwise, fails in CI.

import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../../helpers/cli.js';
import { get } from '../../helpers/client.js';
import { ENVTEST_NEEDS, type Envtest } from '../../helpers/envtest.js';
import { pastFreshWindow } from '../../helpers/next-check.js';
import { IP, root, skipWithout } from '../../helpers/system-tools.js';
import { until } from '../../helpers/until.js';
import { type ProbesCluster, probesCluster, writeRestart } from './probes-cluster.js';

const NS = 'proxied';
/** Private addresses, one /30 per test process: the host's end, and the pod's inside the namespace. */
const NET = `10.252.${process.pid % 250}`;
const HOST = `${NET}.1`;
const POD_IP = `${NET}.2`;
const NETNS = `ohc-${process.pid}-proxy`;
const VETH = `ohp${process.pid % 100000}`;

const skip = skipWithout('analyze --probes through the pod proxy', [
  root('a network namespace for the companion, which the pod proxy reaches'),
  IP,
  ...ENVTEST_NEEDS,
]);

const ip = (...args: string[]) => execa('ip', args);

describe.skipIf(skip)("analyze --probes --companion-metrics through the API server's pod proxy", () => {
  let cluster: ProbesCluster;
  let env: Envtest;
  let companion: ResultPromise | undefined;
  const table = { liveness: { app: { tcpSocket: { port: 8080 }, timeoutSeconds: 1 } } };

  beforeAll(async () => {
    await ip('netns', 'del', NETNS).catch(() => undefined);
    await ip('netns', 'add', NETNS);
    await ip('link', 'add', VETH, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', NETNS);
    await ip('addr', 'add', `${HOST}/30`, 'dev', VETH);
    await ip('link', 'set', VETH, 'up');
    await ip('-n', NETNS, 'addr', 'add', `${POD_IP}/30`, 'dev', 'eth0');
    await ip('-n', NETNS, 'link', 'set', 'eth0', 'up');
    await ip('-n', NETNS, 'link', 'set', 'lo', 'up');
    companion = execa('ip', ['netns', 'exec', NETNS, process.execPath, CLI, 'serve'], {
      env: { OSM_HEALTHCHECK_PROBES: JSON.stringify(table) },
      reject: false,
      stdin: 'ignore',
    });
    await until('the companion in the namespace answers', async () => {
      const answer = await get(`http://${POD_IP}:15904/healthz`).catch(() => undefined);
      return answer?.status === 200;
    });
    // Kubelet's liveness probes: the app behind the companion refuses each.
    for (let i = 0; i < 5; i++) {
      await pastFreshWindow();
      expect((await get(`http://${POD_IP}:15901/osm-liveness-probe/app`)).status).toBe(503);
    }

    cluster = await probesCluster(NS);
    env = cluster.env;
    const spec = {
      containers: [
        {
          name: 'app',
          image: 'app',
          livenessProbe: { httpGet: { path: '/osm-liveness-probe/app', port: 15901 } },
        },
        {
          name: 'osm-healthcheck',
          image: 'osm-healthcheck',
          args: ['serve'],
          env: [{ name: 'OSM_HEALTHCHECK_PROBES', value: JSON.stringify(table) }],
        },
      ],
    };
    const labels = { app: 'web' };
    const rs = await env.admin.create(`/apis/apps/v1/namespaces/${NS}/replicasets`, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec } },
    });
    const owner = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web',
      uid: (rs.metadata as { uid: string }).uid,
    };
    // Two replicas, both restarted within the same minute; the pod proxy reaches one companion for both (the same
    // pod IP), whose liveness failures each replica reads as its own.
    const now = Date.now();
    for (const [i, pod] of ['web-0', 'web-1'].entries()) {
      await env.admin.create(`/api/v1/namespaces/${NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod, labels, ownerReferences: [{ ...owner, controller: true }] },
        spec,
      });
      await writeRestart(env, NS, pod, {
        status: { podIP: POD_IP, podIPs: [{ ip: POD_IP }] },
        endedAt: new Date(now - 40_000 + i * 20_000),
      });
    }
  }, 120_000);

  afterAll(async () => {
    companion?.kill('SIGTERM');
    await companion;
    await cluster?.stop();
    await ip('link', 'del', VETH).catch(() => undefined);
    await ip('netns', 'del', NETNS).catch(() => undefined);
  });

  it("reads the companions' counts through the pod proxy and names the liveness restarts and the replicas restarted together, exit 1", async () => {
    const exit = await cluster.analyze('--companion-metrics', '10', '-o', 'json');
    const report = JSON.parse(exit.stdout) as {
      source: string;
      span: string;
      notes: string[];
      workloads: { name: string; findings: { rule: string; evidence: string }[] }[];
    };
    expect(report.source).toBe("the companions' /metrics (pod proxy)");
    expect(report.span).toBe('since each companion started');
    expect(report.notes).toEqual([
      "without Prometheus: counts since each companion started; restarts from the pods' status and kubelet's events",
    ]);
    expect(report.workloads.map((w) => [w.name, w.findings.map((f) => f.rule)])).toEqual([
      ['web', ['liveness-restarts', 'shared-dependency']],
    ]);
    const [restarts, shared] = report.workloads[0]?.findings ?? [];
    // The restarts are the pods' own count; the failures, the companions' since each started.
    expect(restarts?.evidence).toMatch(
      /^6 restarts of app on 2 pods \(restartCount, the last ended \d\d:\d\d UTC: Error, exit 137\), and 10 liveness failures in 10 probes since each companion started: 10 refused$/,
    );
    // No time steps: the replicas' restart times, from their status, where the companions blame liveness.
    expect(shared?.evidence).toMatch(
      /^liveness restarted all 2 replicas within 1 min \(\d\d:\d\d-\d\d:\d\d UTC, restart times from the pods' status\): a dependency they share, not the pods$/,
    );
    expect(exit.code).toBe(1);
  });
});
