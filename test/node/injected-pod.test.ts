// A Deployment through the built `inject`, on a real node (test/helpers/node-cluster.ts): its init container's rules,
// the companion (a native sidecar, or first with its postStart hook), and kubelet's own liveness and readiness
// probes, every second, through the companion to the app. The pod goes Ready with no restart; the companion's
// /metrics counts kubelet's probes and they keep coming; the app sees them with kubelet's User-Agent; the pod
// carries inject's record.

import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/cli.js';
import { useNodeCluster } from '../helpers/node-cluster.js';
import type { KubeObject } from '../helpers/node-script-pod.js';
import {
  appConfigMap,
  appDeployment,
  companionMetrics,
  readyPod,
  restarts,
} from '../helpers/node-workload.js';
import { until } from '../helpers/until.js';

const node = useNodeCluster('test/node/injected-pod.test.ts (a real one-node cluster)');
const NS = 'osm-hc-injected';
const OTHER_NS = 'osm-hc-peer';
const COMPANION = 'osm-healthcheck';
/** How long a pod may take to start, and a count of probes to grow, on a busy machine. */
const READY_MS = 120_000;

/** The app: answers every path with 200 and logs what asked. */
const APP = `import { createServer } from 'node:http';
createServer((req, res) => {
  console.log(JSON.stringify({ path: req.url, ua: req.headers['user-agent'] ?? '' }));
  res.end('ok');
}).listen(8080);
`;

/** A peer: GETs each URL of its arguments, prints `STATUS URL`. */
const PEER = `for (const url of process.argv.slice(2)) {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  console.log(res.status, url);
}
`;

const periodic = (path: string) => ({ httpGet: { path, port: 8080 }, periodSeconds: 1 });
const deployment = (name: string): KubeObject =>
  appDeployment(name, NS, { liveness: periodic('/live'), readiness: periodic('/ready') });

const succeeded = (kind: string) =>
  `osm_healthcheck_probes_total{kind="${kind}",container="app",handler="httpGet",verdict="success"}`;

describe.skipIf(node.skip)('an injected Deployment on a real node (Kubernetes 1.36)', () => {
  beforeAll(async () => {
    const k = node.cluster();
    await k.createNamespace(NS);
    await k.apply([appConfigMap(NS, APP)]);
  });

  it.each([
    { placement: 'native-sidecar', app: 'web-sidecar', flags: [] },
    { placement: 'first', app: 'web-first', flags: ['--placement', 'first'] },
  ])(
    'placement $placement: Ready with no restart, kubelet probing through the companion',
    async ({ placement, app, flags }) => {
      const k = node.cluster();
      const injected = await runCli(
        ['inject', '--image', k.image, '--kube-version', '1.36', ...flags, '-f', '-'],
        {
          input: stringify(deployment(app)),
        },
      );
      expect(injected.stderr).toContain(placement === 'first' ? 'first' : 'native sidecar');
      expect(injected.code).toBe(0);
      await k.apply(injected.stdout);

      const pod = await readyPod(k, NS, app, READY_MS);
      const name: string = pod.metadata.name;
      const appContainer = pod.spec.containers.find((c: KubeObject) => c.name === 'app');
      // kubelet asks the companion: the probes it runs are the rewritten ones.
      expect(appContainer.livenessProbe.httpGet).toMatchObject({
        port: 15901,
        path: '/osm-liveness-probe/app',
      });
      expect(appContainer.readinessProbe.httpGet).toMatchObject({
        port: 15902,
        path: '/osm-readiness-probe/app',
      });
      const initStatus = pod.status.initContainerStatuses.find(
        (s: KubeObject) => s.name === 'osm-healthcheck-init',
      );
      expect(initStatus.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });

      const record = JSON.parse(pod.metadata.annotations['osm-healthcheck/status']);
      expect(record).toMatchObject({ image: k.image, placement, bypass: 'init-container' });

      // The companion counts kubelet's probes, and they keep coming, one a second each.
      let first = new Map<string, number>();
      await until(
        'three successful liveness and readiness probes through the companion',
        async () => {
          first = await companionMetrics(k, NS, name, COMPANION);
          return (
            (first.get(succeeded('liveness')) ?? 0) >= 3 && (first.get(succeeded('readiness')) ?? 0) >= 3
          );
        },
        () => [...first].filter(([s]) => s.startsWith('osm_healthcheck_probes_total')).join('\n'),
        READY_MS,
      );
      let later = first;
      await until(
        'more probes through the companion',
        async () => {
          later = await companionMetrics(k, NS, name, COMPANION);
          return (
            (later.get(succeeded('liveness')) ?? 0) >= (first.get(succeeded('liveness')) ?? 0) + 2 &&
            (later.get(succeeded('readiness')) ?? 0) >= (first.get(succeeded('readiness')) ?? 0) + 2
          );
        },
        () => `first ${first.get(succeeded('liveness'))}, later ${later.get(succeeded('liveness'))}`,
        READY_MS,
      );
      // kubelet's first probes may come before the app listens, with or without the companion; once both
      // answer, not one fails.
      const failed = (m: Map<string, number>) =>
        [...m].filter(
          ([s, v]) =>
            /^osm_healthcheck_probe(s_total\{.*verdict="(failure|warning)"|_failures_total)/.test(s) && v > 0,
        );
      expect(failed(later), `failures at the first count: ${failed(first).join('; ')}`).toEqual(
        failed(first),
      );

      // The app saw them as kubelet sent them: its own paths, kubelet's User-Agent.
      const logs = await k.kubectl(['logs', '-n', NS, name, '-c', 'app']);
      const seen = logs
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { path: string; ua: string });
      expect(seen).toContainEqual({ path: '/live', ua: 'kube-probe/1.36' });
      expect(seen).toContainEqual({ path: '/ready', ua: 'kube-probe/1.36' });

      const now = await k.get('pod', name, NS);
      expect(restarts(now)).toEqual(Object.fromEntries(Object.keys(restarts(now)).map((c) => [c, 0])));
      expect(Object.keys(restarts(now)).sort()).toEqual(['app', COMPANION, 'osm-healthcheck-init'].sort());
    },
    3 * READY_MS,
  );

  it('a pod of another namespace reaches the companion on 15904 and 15901 (runNodeScript)', async () => {
    const k = node.cluster();
    const target = await readyPod(k, NS, 'web-sidecar', READY_MS);
    await k.createNamespace(OTHER_NS);
    const peer = await k.runNodeScript({
      name: 'peer',
      namespace: OTHER_NS,
      script: PEER,
      args: [
        `http://${target.status.podIP}:15904/healthz`,
        `http://${target.status.podIP}:15901/osm-liveness-probe/app`,
      ],
    });
    const { phase, logs } = await peer.finished(READY_MS);
    expect({ phase, logs }).toMatchObject({ phase: 'Succeeded' });
    expect(logs.trim().split('\n')).toEqual([
      `200 http://${target.status.podIP}:15904/healthz`,
      `200 http://${target.status.podIP}:15901/osm-liveness-probe/app`,
    ]);
  });
});
