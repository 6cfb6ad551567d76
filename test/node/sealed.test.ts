// The sealed mode on a real node (test/helpers/node-cluster.ts, Kubernetes 1.36): deploy/node's agent as a
// DaemonSet (its pod network read from its Node, through its own RBAC), and Deployments injected with `--seal node`.
// A sealed pod goes Ready with no restart, kubelet's probes passing through its companion, its init container
// says sealed and so does the agent's Sealed event on the pod; a pod of another namespace gets no answer
// from any of 15901-15904; restarting the agent fails no probe; without the agent a new pod runs open, says why,
// and analyze names it. The agent's rules are the machine's (hostNetwork): removed after the file, whatever happened.

import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { SEAL_SOURCES } from '../../src/seal/sources.js';
import { CLI, ROOT, runCli } from '../helpers/cli.js';
import { type NodeCluster, useNodeCluster } from '../helpers/node-cluster.js';
import type { KubeObject } from '../helpers/node-script-pod.js';
import {
  appConfigMap,
  appDeployment,
  eventsOn,
  readyCondition,
  readyPod,
  restarts,
} from '../helpers/node-workload.js';

const node = useNodeCluster('test/node/sealed.test.ts (the sealed mode on a real one-node cluster)');
const NS = 'osm-hc-sealed';
const OTHER_NS = 'osm-hc-stranger';
const COMPANION = 'osm-healthcheck';
const INIT = 'osm-healthcheck-init';
const READY_MS = 120_000;
/** The node's pod network (../shared/node/README.md). */
const POD_CIDR = '10.88.0.0/16';

const APP = `import { createServer } from 'node:http';
createServer((req, res) => res.end('ok')).listen(8080);
`;

/**
 * A stranger: a GET to each URL of its arguments, `answer STATUS URL` or `no answer URL: why`. node:http, not fetch:
 * the undici of Node 20 (the test image's node is the machine's) leaves fetch's promise unsettled when the server
 * resets the connection at once, as a sealed companion does to a stranger, and the script exits 13 having said
 * nothing.
 */
const STRANGER = `import { request } from 'node:http';
const ask = (url) =>
  new Promise((resolve) => {
    const req = request(url, { timeout: 3000 }, (res) => {
      res.resume();
      resolve('answer ' + res.statusCode + ' ' + url);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no reply within 3 s'), { code: 'TIMEOUT' })));
    req.on('error', (err) => resolve('no answer ' + url + ': ' + (err.code ?? err.message)));
    req.end();
  });
for (const url of process.argv.slice(2)) console.log(await ask(url));
`;

const periodic = (path: string) => ({ httpGet: { path, port: 8080 }, periodSeconds: 1 });
const deployment = (name: string): KubeObject =>
  appDeployment(name, NS, { liveness: periodic('/live'), readiness: periodic('/ready') });

/**
 * deploy/node as the node runs it: its ServiceAccount and RBAC as they are, the DaemonSet with the imported image
 * and nothing else changed, so the agent reads the pod network from its Node, through its own grants.
 */
function agentObjects(image: string): KubeObject[] {
  const rbac = parseAllDocuments(readFileSync(`${ROOT}deploy/node/rbac.yaml`, 'utf8')).map(
    (d) => d.toJS() as KubeObject,
  );
  const daemonSet = parse(readFileSync(`${ROOT}deploy/node/daemonset.yaml`, 'utf8')) as KubeObject;
  const [container] = daemonSet.spec.template.spec.containers;
  container.image = image;
  container.imagePullPolicy = 'Never';
  return [...rbac, daemonSet];
}

/** Each event on the pod as `REASON from COMPONENT: message`. */
async function podEvents(k: NodeCluster, pod: string): Promise<string[]> {
  return (await eventsOn(k, NS, pod)).map((e) => `${e.reason} from ${e.source?.component}: ${e.message}`);
}

const initMessage = (pod: KubeObject): string =>
  pod.status.initContainerStatuses.find((s: KubeObject) => s.name === INIT)?.state?.terminated?.message ?? '';

const noRestarts = (pod: KubeObject): boolean => Object.values(restarts(pod)).every((n) => n === 0);

/** kubelet's Unhealthy events for the pod: each probe failure it saw. */
async function unhealthy(k: NodeCluster, pod: string): Promise<string[]> {
  return (await eventsOn(k, NS, pod))
    .filter((e) => e.reason === 'Unhealthy')
    .map((e) => `${e.count ?? 1}x ${e.message}`);
}

async function inject(k: NodeCluster, app: string): Promise<void> {
  const injected = await runCli(
    ['inject', '--image', k.image, '--kube-version', '1.36', '--seal', 'node', '-f', '-'],
    { input: stringify(deployment(app)) },
  );
  expect(injected.code, injected.stderr).toBe(0);
  await k.apply(injected.stdout);
}

const agentRollout = (k: NodeCluster) =>
  k.kubectl(['rollout', 'status', '-n', 'kube-system', 'daemonset/osm-healthcheck-node', '--timeout=120s'], {
    timeoutMs: 130_000,
  });

describe.skipIf(node.skip)('the sealed mode on a real node (Kubernetes 1.36)', () => {
  let sealedPod: KubeObject;
  /** kubelet's Unhealthy events for the sealed pod once it was Ready: those of its start, if any. */
  let startFailures: string[] = [];

  beforeAll(async () => {
    const k = node.cluster();
    // What node IPAM (kube-controller-manager --allocate-node-cidrs, or a cloud's) writes; this node's CNI has
    // its own (host-local), so nothing else reads it here.
    await k.kubectl([
      'patch',
      'node',
      'k8s-node',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { podCIDR: POD_CIDR, podCIDRs: [POD_CIDR] } }),
    ]);
    await k.createNamespace(NS);
    await k.apply([appConfigMap(NS, APP), ...agentObjects(k.image)]);
    await agentRollout(k);
    const logs = await k.kubectl(['logs', '-n', 'kube-system', 'daemonset/osm-healthcheck-node']);
    expect(logs).toContain(`"podCidrs":["${POD_CIDR}"],"podCidrsFrom":"node k8s-node"`);
  }, 180_000);

  afterAll(async () => {
    // The agent ran in the machine's own network namespace: its rules go with the file.
    await node
      .cluster()
      .kubectl([
        'delete',
        '-n',
        'kube-system',
        'daemonset/osm-healthcheck-node',
        '--ignore-not-found',
        '--wait',
      ])
      .catch(() => '');
    const cleanup = await execa(process.execPath, [CLI, 'node', '--cleanup'], { reject: false });
    expect(cleanup.exitCode, cleanup.stderr).toBe(0);
  }, 120_000);

  it(
    'an injected pod is Ready with 0 restarts, kubelet probing through its sealed companion, and says sealed',
    async () => {
      const k = node.cluster();
      await inject(k, 'web-sealed');
      sealedPod = await readyPod(k, NS, 'web-sealed', READY_MS);
      const record = JSON.parse(sealedPod.metadata.annotations['osm-healthcheck/status']);
      expect(record).toMatchObject({ seal: 'node', bypass: 'init-container' });
      expect(initMessage(sealedPod)).toMatch(
        new RegExp(
          `^sealed: 15901-15904 bypass the mesh only from ${SEAL_SOURCES.v4.replaceAll('.', '\\.')}`,
        ),
      );
      const logs = await k.kubectl(['logs', '-n', NS, sealedPod.metadata.name, '-c', COMPANION]);
      expect(logs).toContain('"sealed":true');
      // The agent says it on the pod, as kubelet says its own.
      expect(await podEvents(k, sealedPod.metadata.name)).toContainEqual(
        expect.stringMatching(
          /^Sealed from osm-healthcheck-node: sealed: 15901-15904 bypass the mesh only from /,
        ),
      );
      // kubelet keeps probing, one a second: the pod stays Ready, nothing restarts, and past its start (a startup
      // probe before the companion listens, a readiness probe before the app does) no probe fails.
      startFailures = await unhealthy(k, sealedPod.metadata.name);
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const now = await k.get('pod', sealedPod.metadata.name, NS);
      expect(noRestarts(now), JSON.stringify(now.status)).toBe(true);
      expect(await unhealthy(k, sealedPod.metadata.name)).toEqual(startFailures);
    },
    3 * READY_MS,
  );

  it(
    'a pod of another namespace gets no answer from any of 15901-15904',
    async () => {
      const k = node.cluster();
      await k.createNamespace(OTHER_NS);
      const ip = sealedPod.status.podIP;
      const urls = [
        `http://${ip}:15901/osm-liveness-probe/app`,
        `http://${ip}:15902/osm-readiness-probe/app`,
        `http://${ip}:15903/osm-startup-probe/app`,
        `http://${ip}:15904/healthz`,
      ];
      const stranger = await k.runNodeScript({
        name: 'stranger',
        namespace: OTHER_NS,
        script: STRANGER,
        args: urls,
      });
      const done = await stranger.finished(READY_MS);
      // A pod that has just ended may not have its log read back at once: ask again.
      let { logs } = done;
      if (logs.trim() === '') {
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        logs = await stranger.logs();
      }
      expect(done.phase, `${logs}\n${await k.describe(OTHER_NS)}`).toBe('Succeeded');
      const lines = logs.trim().split('\n');
      expect(lines, logs).toHaveLength(4);
      for (const line of lines) expect(line, logs).toMatch(/^no answer /);
    },
    READY_MS + 30_000,
  );

  it('restarting the agent fails no probe: its rules stay while it is away', async () => {
    const k = node.cluster();
    const name = sealedPod.metadata.name;
    await k.kubectl([
      'delete',
      'pod',
      '-n',
      'kube-system',
      '-l',
      'app.kubernetes.io/name=osm-healthcheck-node',
    ]);
    await agentRollout(k);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const now = await k.get('pod', name, NS);
    expect(noRestarts(now)).toBe(true);
    expect(readyCondition(now)?.status).toBe('True');
    expect(await unhealthy(k, name)).toEqual(startFailures);
  }, 180_000);

  it(
    'without the agent a new pod runs open, says why, and analyze names it',
    async () => {
      const k = node.cluster();
      await k.kubectl(['delete', '-n', 'kube-system', 'daemonset/osm-healthcheck-node', '--wait']);
      await inject(k, 'web-open');
      const open = await readyPod(k, NS, 'web-open', READY_MS);
      expect(initMessage(open)).toMatch(
        /^open: 15901-15904 bypass the mesh from every source, as without the node agent, because no proof connection from the node agent: /,
      );
      expect(noRestarts(open)).toBe(true);
      // The sealed pod keeps passing: the agent's rules outlive it.
      const sealed = await k.get('pod', sealedPod.metadata.name, NS);
      expect(readyCondition(sealed)?.status).toBe('True');

      const analyzed = await runCli(['analyze', '-n', NS], {
        env: { KUBECONFIG: k.kubeconfig },
        timeoutMs: 60_000,
      });
      expect(analyzed.stdout).toContain('SEALED MODE');
      expect(analyzed.stdout).toMatch(/^k8s-node +none +1 +1 +no proof connection from the node agent/m);
      expect(analyzed.stdout).toContain(
        `k8s-node ${NS} Deployment/web-open ${open.metadata.name} (open): no agent on k8s-node`,
      );
      expect(analyzed.stdout).toContain(
        "removing the node agent's rules from k8s-node (node --cleanup) fails every probe of its 1 sealed pod",
      );
    },
    3 * READY_MS,
  );
});
