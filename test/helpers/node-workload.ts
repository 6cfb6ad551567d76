// What the real-node suites (test/node/) do with an app they inject: its Deployment (a Node.js script from the
// ConfigMap `app`, run by the project's own image), its one pod once Ready, each container's restarts, the events on
// a pod, and the companion's /metrics read inside its container.

import { samples } from './exposition.js';
import { type NodeCluster, TEST_IMAGE } from './node-cluster.js';
import type { KubeObject } from './node-script-pod.js';
import { until } from './until.js';

/** Where the app's ConfigMap (`app`, key `app.mjs`) is mounted in the app container. */
const APP_DIR = '/app-script';

/** The ConfigMap the app's Deployment runs: `script` as `app.mjs`. */
export function appConfigMap(namespace: string, script: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app', namespace },
    data: { 'app.mjs': script },
  };
}

/** A one-replica Deployment of the app (port 8080) with these probes, before inject. */
export function appDeployment(
  name: string,
  namespace: string,
  probes: { liveness: KubeObject; readiness: KubeObject },
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'app',
              image: TEST_IMAGE,
              imagePullPolicy: 'Never',
              command: ['/usr/local/bin/node', `${APP_DIR}/app.mjs`],
              ports: [{ containerPort: 8080 }],
              livenessProbe: probes.liveness,
              readinessProbe: probes.readiness,
              volumeMounts: [{ name: 'app', mountPath: APP_DIR }],
            },
          ],
          volumes: [{ name: 'app', configMap: { name: 'app' } }],
        },
      },
    },
  };
}

export const readyCondition = (pod: KubeObject): KubeObject | undefined =>
  pod.status?.conditions?.find((c: KubeObject) => c.type === 'Ready');

/** The Deployment `app`'s one pod, once Ready; else an error with the namespace described. */
export async function readyPod(
  k: NodeCluster,
  namespace: string,
  app: string,
  ms: number,
): Promise<KubeObject> {
  let pod: KubeObject | undefined;
  await until(
    `a Ready pod of ${app}`,
    async () => {
      const pods = JSON.parse(
        await k.kubectl(['get', 'pods', '-n', namespace, '-l', `app=${app}`, '-o', 'json']),
      );
      pod = pods.items[0];
      return pod !== undefined && readyCondition(pod)?.status === 'True';
    },
    () => '',
    ms,
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await k.describe(namespace)}`);
  });
  return pod as KubeObject;
}

/** Every container's restarts by name, the init containers' (a native sidecar is one) with the others'. */
export const restarts = (pod: KubeObject): Record<string, number> =>
  Object.fromEntries(
    [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].map(
      (s: KubeObject) => [s.name, s.restartCount],
    ),
  );

/** The events on the pod: kubelet's and anyone else's. */
export async function eventsOn(k: NodeCluster, namespace: string, pod: string): Promise<KubeObject[]> {
  const selector = `involvedObject.name=${pod}`;
  const events = JSON.parse(
    await k.kubectl(['get', 'events', '-n', namespace, '--field-selector', selector, '-o', 'json']),
  );
  return events.items;
}

/** The companion's own /metrics, read inside its container `container` of the pod. */
export async function companionMetrics(
  k: NodeCluster,
  namespace: string,
  pod: string,
  container: string,
): Promise<Map<string, number>> {
  const scrape =
    "fetch('http://127.0.0.1:15904/metrics').then((r) => r.text()).then((t) => process.stdout.write(t))";
  return samples(
    await k.kubectl(['exec', '-n', namespace, pod, '-c', container, '--', 'node', '-e', scrape]),
  );
}
