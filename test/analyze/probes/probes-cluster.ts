// What the analyze --probes suites share: a real kube-apiserver with a namespace and an admin kubeconfig, the
// built CLI's `analyze --probes` against it, and kubelet's record of a restart written to a pod's status.

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

/** What kubelet writes when it restarted `container` just now (exit 137), through the status subresource. */
export async function writeRestart(
  env: Envtest,
  namespace: string,
  pod: string,
  status: Record<string, unknown> = {},
): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/pods/${pod}`;
  const now = new Date().toISOString();
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
