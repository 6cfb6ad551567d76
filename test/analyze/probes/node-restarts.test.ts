// `analyze --probes -A` with no live source on a real node (test/helpers/node-cluster.ts, Kubernetes 1.36): a
// Deployment of two replicas whose app fails its liveness check (500), so the real kubelet kills and restarts each
// container and records it (restartCount, lastState.terminated, its Killing and Unhealthy events). With neither
// --prometheus nor --companion-metrics, the built CLI names the workload with liveness-restarts from kubelet's
// events, the replicas restarted together with shared-dependency, and exits 1.

import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { TEST_IMAGE, useNodeCluster } from '../../helpers/node-cluster.js';
import {
  type KubeObject,
  type NodeScript,
  scriptConfigMap,
  scriptPodSpec,
} from '../../helpers/node-script-pod.js';
import { until } from '../../helpers/until.js';

const node = useNodeCluster('test/analyze/probes/node-restarts.test.ts (a real one-node cluster)');
const NS = 'osm-hc-restarts';
/** Two restarts each, on a busy machine: kubelet's back-off waits 10 s before the second. */
const RESTARTED_MS = 180_000;

/** The app: its liveness check fails (a dependency gone), its readiness check passes. */
const APP = `import { createServer } from 'node:http';
createServer((req, res) => res.writeHead(req.url === '/live' ? 500 : 200).end()).listen(8080);
`;

/** The app as a script of the project's image (node-script-pod.ts), its container given kubelet's two probes. */
const app: NodeScript = { name: 'web', namespace: NS, script: APP, restartPolicy: 'Always' };
const spec = scriptPodSpec(app, TEST_IMAGE);
spec.containers[0] = {
  ...spec.containers[0],
  name: 'app',
  readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1 },
  livenessProbe: { httpGet: { path: '/live', port: 8080 }, periodSeconds: 1, failureThreshold: 2 },
};
const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: NS },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec },
  },
};

interface Report {
  source: string | null;
  needsAction: boolean;
  workloads: {
    namespace: string;
    kind: string;
    name: string;
    findings: { rule: string; evidence: string }[];
  }[];
}

describe.skipIf(node.skip)('analyze --probes with no live source, on a real node', () => {
  beforeAll(async () => {
    const k = node.cluster();
    await k.createNamespace(NS);
    await k.apply([scriptConfigMap(app), deployment]);
    let seen = '';
    await until(
      'kubelet restarted both replicas for their liveness probe',
      async () => {
        const pods = JSON.parse(await k.kubectl(['get', 'pods', '-n', NS, '-l', 'app=web', '-o', 'json']));
        const counts = pods.items.map(
          (p: KubeObject) => p.status?.containerStatuses?.[0]?.restartCount ?? 0,
        ) as number[];
        seen = counts.join(', ');
        return counts.length === 2 && counts.every((n) => n >= 1);
      },
      () => `restartCount ${seen}`,
      RESTARTED_MS,
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}\n${await k.describe(NS)}`);
    });
  }, RESTARTED_MS + 60_000);

  it("names the workload from kubelet's events, the replicas restarted together, and exits 1", async () => {
    const k = node.cluster();
    const exit = await runCli(['analyze', '--kubeconfig', k.kubeconfig, '--probes', '-A', '-o', 'json'], {
      env: { KUBECONFIG: '' },
      timeoutMs: 60_000,
    });
    const report = JSON.parse(exit.stdout) as Report;
    expect(report.source).toBeNull();
    const web = report.workloads.find((w) => w.namespace === NS && w.name === 'web');
    expect(web?.kind).toBe('Deployment');
    const rules = Object.fromEntries(web?.findings.map((f) => [f.rule, f.evidence]) ?? []);
    expect(Object.keys(rules), exit.stdout).toEqual(
      expect.arrayContaining(['liveness-restarts', 'shared-dependency']),
    );
    // kubelet's last Unhealthy is the app's 500, or a probe of a restarted container that does not listen yet.
    expect(rules['liveness-restarts']).toMatch(
      /^\d+ restarts of app on 2 pods \(restartCount, the last ended \d\d:\d\d UTC: \w+, exit \d+\), and kubelet's events: \d+ Killing for failed liveness, \d+ Unhealthy \(last: "Liveness probe failed: (HTTP probe failed with statuscode: 500|Get \\"http:\/\/[\d.]+:8080\/live\\": dial tcp [\d.]+:8080: connect: connection refused)"\)$/,
    );
    expect(rules['shared-dependency']).toMatch(
      /^liveness restarted all 2 replicas within \d+ min .*kubelet's events/,
    );
    expect(report.needsAction).toBe(true);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('a liveness probe restarted pods within the window');
  });
});
