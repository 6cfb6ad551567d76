// Reinvocation (docs/architecture.md#the-webhook) with a real kube-apiserver between the calls, on each version the project is
// checked on (1.26, 1.32, 1.36): our webhook patches the pod, a mesh
// injector after it (a small webhook here, configured after ours) adds its proxy, and the API server calls ours
// again (reinvocationPolicy: IfNeeded) on the pod as it now is: decoded and defaulted, LimitRanger's defaults on
// every container, the proxy added. Ours must answer that with no patch, and the pod is admitted with one
// companion. The stand-in of this (test/helpers/api-server-admission.ts betweenCalls) is checked here.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVTEST_SERVERS, type Envtest, envtestNeeds, startEnvtest } from '../helpers/envtest.js';
import { makeNamespace, type Pod } from '../helpers/envtest-namespace.js';
import {
  applyRbac,
  type RunningWebhook,
  registerWebhook,
  startWebhook,
  WEBHOOK_USER,
} from '../helpers/envtest-webhook.js';
import { type PatchOp, type StandInInjector, standInInjector } from '../helpers/stand-in-injector.js';
import { skipWithout } from '../helpers/system-tools.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { until } from '../helpers/until.js';
import { appPod } from './rule-cases.js';

type Json = Record<string, unknown>;

const NAMESPACE = 'meshed';
const PROXY = { name: 'mesh-proxy', image: 'mesh/proxy:1.0', ports: [{ containerPort: 15001 }] };

let env: Envtest;
let cert: TestCert;
let webhook: RunningWebhook;
let mesh: StandInInjector;
const meshCalls: Json[] = [];

/** A mesh injector: adds its proxy last among the containers, once. */
function meshPatch(pod: Pod): PatchOp[] {
  meshCalls.push(pod);
  const containers = pod.spec.containers ?? [];
  return containers.some((c) => c.name === PROXY.name)
    ? []
    : [{ op: 'add', path: '/spec/containers/-', value: PROXY }];
}

const admissions = () =>
  webhook
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Json)
    .filter((l) => l.msg === 'admission' && l.namespace === NAMESPACE);

describe.each(ENVTEST_SERVERS.map((server) => ({ server, version: server.version })))(
  'kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(
      `reinvocation through a real kube-apiserver ${server.version}`,
      envtestNeeds(server),
    );

    beforeAll(async () => {
      if (skip) return;
      env = await startEnvtest([WEBHOOK_USER], server);
      cert = makeTestCert();
      await applyRbac(env.admin);
      await makeNamespace(env.admin, NAMESPACE, { 'osm-healthcheck-injection': 'enabled' }, [
        {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'defaults' },
          spec: {
            limits: [
              {
                type: 'Container',
                default: { cpu: '500m', memory: '256Mi' },
                defaultRequest: { cpu: '100m', memory: '64Mi' },
              },
            ],
          },
        },
      ]);
      webhook = await startWebhook(env, cert);
      mesh = await standInInjector(cert, meshPatch);
      // Configurations are called in the order of their names: ours, then the mesh's.
      await registerWebhook(env.admin, 'osm-healthcheck', webhook.url, cert.cert, 'enabled');
      await registerWebhook(env.admin, 'zz-mesh', mesh.url, cert.cert, 'enabled');
    }, 120_000);

    afterAll(async () => {
      await webhook?.stop();
      mesh?.server.close();
      cert?.cleanup();
      await env?.stop();
    });

    describe.skipIf(skip)('a mesh injector after us', () => {
      it('our second call returns no patch, and the pod keeps one companion, the proxy and the defaults', async () => {
        // Both configurations take effect a moment after they are created.
        const called = async () => {
          meshCalls.length = 0;
          await env.admin.dryRunPod(NAMESPACE, appPod());
          return meshCalls.some((p) => (p.spec as Pod['spec']).containers?.[0]?.name === 'osm-healthcheck');
        };
        await until('the mesh sees our patch', called, webhook.output);
        const before = admissions().length;
        const result = await env.admin.dryRunPod(NAMESPACE, appPod());
        expect(result.admitted ? 'admitted' : result.message).toBe('admitted');
        // Ours is called twice for this dry run: patched, then (reinvoked) unchanged. A line of the last dry run
        // above may still be on its way when `before` is read, so the count is at least two more.
        await expect
          .poll(() => {
            const lines = admissions();
            return lines.length >= before + 2 ? lines.slice(-2).map((l) => l.result) : [];
          })
          .toEqual(['patched', 'unchanged']);
        const pod = result.admitted ? result.object : {};
        const spec = (pod as Pod).spec;
        const names = (list: { name?: string }[] | undefined) => (list ?? []).map((c) => c.name);
        expect({ init: names(spec.initContainers), containers: names(spec.containers) }).toEqual({
          init: ['osm-healthcheck-init'],
          containers: ['osm-healthcheck', 'web', 'mesh-proxy'],
        });
        expect(spec.containers?.find((c) => c.name === 'mesh-proxy')?.resources).toEqual({
          limits: { cpu: '500m', memory: '256Mi' },
          requests: { cpu: '100m', memory: '64Mi' },
        });
      }, 40_000);
    });
  },
);
