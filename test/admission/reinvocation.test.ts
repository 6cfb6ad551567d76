// Reinvocation (docs/architecture.md#the-webhook) with a real kube-apiserver between the calls, on each version the project is
// checked on (1.26, 1.32, 1.36): our webhook patches the pod, a mesh
// injector after it (a small webhook here, configured after ours) adds its proxy, and the API server calls ours
// again (reinvocationPolicy: IfNeeded) on the pod as it now is: decoded and defaulted, LimitRanger's defaults on
// every container, the proxy added. Ours must answer that with no patch, and the pod is admitted with one
// companion. The stand-in of this (test/helpers/api-server-admission.ts betweenCalls) is checked here.

import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
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
let mesh: Server;
const meshCalls: Json[] = [];

/** A mesh injector: adds its proxy last among the containers, once. */
function meshInjector(): Server {
  return createServer({ key: cert.key, cert: cert.cert }, async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const review = JSON.parse(body) as { request: { uid: string; object: Pod } };
    meshCalls.push(review.request.object);
    const containers = review.request.object.spec.containers ?? [];
    const patch = containers.some((c) => c.name === PROXY.name)
      ? []
      : [{ op: 'add', path: '/spec/containers/-', value: PROXY }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: {
          uid: review.request.uid,
          allowed: true,
          ...(patch.length === 0
            ? {}
            : { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }),
        },
      }),
    );
  });
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
      mesh = meshInjector();
      mesh.listen(0, '127.0.0.1');
      await once(mesh, 'listening');
      // Configurations are called in the order of their names: ours, then the mesh's.
      await registerWebhook(env.admin, 'osm-healthcheck', webhook.url, cert.cert, 'enabled');
      const { port } = mesh.address() as AddressInfo;
      await registerWebhook(env.admin, 'zz-mesh', `https://127.0.0.1:${port}/`, cert.cert, 'enabled');
    }, 120_000);

    afterAll(async () => {
      await webhook?.stop();
      mesh?.close();
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
        await expect.poll(() => admissions().length).toBe(before + 2);
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
        expect(
          admissions()
            .slice(-2)
            .map((l) => l.result),
        ).toEqual(['patched', 'unchanged']);
      }, 40_000);
    });
  },
);
