// What the analyze --probes suites share: a real kube-apiserver with a namespace and an admin kubeconfig, the
// built CLI's `analyze --probes` against it, and kubelet's record of a restart: the pod's status, written through
// the status subresource, and the events kubelet writes when a liveness probe fails and restarts the container.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Exit, runCli } from '../../helpers/cli.js';
import { type Envtest, startEnvtest } from '../../helpers/envtest.js';
import { kubeconfigFor } from '../../helpers/kubeconfig.js';

export interface ProbesCluster {
  env: Envtest;
  kubeconfig: string;
  /** `analyze --kubeconfig K --probes -n NS ...args`. */
  analyze(...args: string[]): Promise<Exit>;
  stop(): Promise<void>;
}

export async function probesCluster(namespace: string): Promise<ProbesCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-probes-'));
  const env = await startEnvtest();
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(env.url, readFileSync(env.tokenFile('admin'), 'utf8'), env.caFile));
  await env.admin.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  return {
    env,
    kubeconfig,
    analyze: (...args) =>
      runCli(['analyze', '--kubeconfig', kubeconfig, '--probes', '-n', namespace, ...args], {
        env: { KUBECONFIG: '' },
        timeoutMs: 30_000,
      }),
    stop: async () => {
      await env.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What kubelet writes when it restarted `app` for the third time (exit 137), the last restart ending at `endedAt`
 * (now by default), through the status subresource.
 */
export async function writeRestart(
  env: Envtest,
  namespace: string,
  pod: string,
  { status = {}, endedAt = new Date() }: { status?: Record<string, unknown>; endedAt?: Date } = {},
): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/pods/${pod}`;
  const now = endedAt.toISOString();
  await env.admin.put(`${path}/status`, {
    ...(await env.admin.get(path)),
    status: {
      phase: 'Running',
      ...status,
      containerStatuses: [
        {
          name: 'app',
          ready: false,
          restartCount: 3,
          image: 'app',
          imageID: '',
          state: { running: { startedAt: now } },
          lastState: { terminated: { exitCode: 137, reason: 'Error', finishedAt: now } },
        },
      ],
    },
  });
}

/**
 * The events kubelet's recorder writes on `pod` when its liveness probe fails `failures` times and restarts `app`
 * three times, the first kill at `first` and the last at `last` (core/v1, aggregated: count, first and last time).
 */
export async function writeLivenessEvents(
  env: Envtest,
  namespace: string,
  pod: string,
  first: Date,
  last: Date,
  failures = 9,
): Promise<void> {
  const uid = (
    (await env.admin.get(`/api/v1/namespaces/${namespace}/pods/${pod}`)).metadata as { uid: string }
  ).uid;
  const involvedObject = {
    kind: 'Pod',
    namespace,
    name: pod,
    uid,
    apiVersion: 'v1',
    fieldPath: 'spec.containers{app}',
  };
  for (const [reason, type, count, message] of [
    ['Unhealthy', 'Warning', failures, 'Liveness probe failed: HTTP probe failed with statuscode: 500'],
    ['Killing', 'Normal', 3, 'Container app failed liveness probe, will be restarted'],
  ] as const) {
    await env.admin.create(`/api/v1/namespaces/${namespace}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${pod}.${reason.toLowerCase()}` },
      involvedObject,
      reason,
      message,
      type,
      count,
      firstTimestamp: first.toISOString(),
      lastTimestamp: last.toISOString(),
      source: { component: 'kubelet', host: 'node-1' },
    });
  }
}
