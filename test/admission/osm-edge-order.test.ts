// Our webhook in a namespace osm-edge meshes, in both orders, through a real kube-apiserver. The API server calls
// mutating webhooks in the order of their configurations' names and then reinvokes (reinvocationPolicy:
// IfNeeded). Ours (`osm-healthcheck`) comes before osm-edge's (`osm-webhook-…`). A stand-in osm-edge injector
// (test/rewrite/osm-edge-injector.ts, from osm-edge's source) sits behind each name. Either way the pod is
// admitted as osm-edge alone makes it: no companion beside the sidecar that listens on 15901-15903.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodSpec } from '../../src/rewrite/types.js';
import { ENVTEST_NEEDS, type Envtest, startEnvtest } from '../helpers/envtest.js';
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
import { osmEdgeInject } from '../rewrite/osm-edge-injector.js';
import { appPod } from './rule-cases.js';

const skip = skipWithout("our webhook and osm-edge's through a real kube-apiserver", ENVTEST_NEEDS);

let env: Envtest;
let cert: TestCert;
let webhook: RunningWebhook;
let osmEdge: StandInInjector;

/** osm-edge's injector: injects a pod once (it skips a pod that has its sidecar). */
function osmEdgePatch(pod: Pod): PatchOp[] {
  const spec = pod.spec as PodSpec;
  if ((spec.containers ?? []).some((c) => c.name === 'sidecar')) return [];
  const next = osmEdgeInject(spec);
  return [
    { op: 'add', path: '/spec/initContainers', value: next.initContainers },
    { op: 'replace', path: '/spec/containers', value: next.containers },
  ];
}

beforeAll(async () => {
  if (skip) return;
  env = await startEnvtest([WEBHOOK_USER]);
  cert = makeTestCert();
  await applyRbac(env.admin);
  // `after`: osm-edge's webhook named as it is, after ours; `before`: named to come first.
  await makeNamespace(env.admin, 'after', { 'osm-healthcheck-injection': 'after' }, []);
  await makeNamespace(env.admin, 'before', { 'osm-healthcheck-injection': 'before' }, []);
  webhook = await startWebhook(env, cert);
  osmEdge = await standInInjector(cert, osmEdgePatch);
  const { url } = osmEdge;
  await registerWebhook(env.admin, 'osm-healthcheck-after', webhook.url, cert.cert, 'after');
  await registerWebhook(env.admin, 'osm-webhook-osm', url, cert.cert, 'after');
  await registerWebhook(env.admin, 'aa-osm-webhook', url, cert.cert, 'before');
  await registerWebhook(env.admin, 'osm-healthcheck-before', webhook.url, cert.cert, 'before');
}, 120_000);

afterAll(async () => {
  await webhook?.stop();
  osmEdge?.server.close();
  cert?.cleanup();
  await env?.stop();
});

const names = (spec: Pod['spec']) => ({
  init: (spec.initContainers ?? []).map((c) => c.name),
  containers: (spec.containers ?? []).map((c) => c.name),
});

describe.skipIf(skip)("our webhook and osm-edge's, in either order", () => {
  it.each(['after', 'before'])(
    'osm-edge %s ours: admitted as osm-edge alone makes the pod',
    async (namespace) => {
      let pod: Pod | undefined;
      let warnings: string[] = [];
      // Both configurations take effect a moment after they are created.
      await until(
        `both webhooks called in namespace ${namespace}`,
        async () => {
          const result = await env.admin.dryRunPod(namespace, appPod());
          if (!result.admitted) throw new Error(result.message);
          pod = result.object as Pod;
          warnings = result.warnings ?? [];
          return (
            (pod.spec.containers ?? []).some((c) => c.name === 'sidecar') &&
            warnings.some((w) => w.includes('osm-edge'))
          );
        },
        webhook.output,
      );
      const spec = (pod as Pod).spec;
      expect(names(spec)).toEqual({ init: ['osm-init'], containers: ['web', 'sidecar', 'osm-healthcheck'] });
      const web = spec.containers?.find((c) => c.name === 'web');
      // osm-edge's form of the two probes: HTTP on 15902 with its headers, TCP on 15904 through its container.
      expect(web?.readinessProbe?.httpGet).toMatchObject({ path: '/osm-healthcheck', port: 15902 });
      expect(web?.livenessProbe?.httpGet).toMatchObject({
        path: '/osm-healthcheck',
        port: 15904,
        httpHeaders: [{ name: 'Original-Tcp-Port', value: '8080' }],
      });
      expect(spec.containers?.find((c) => c.name === 'osm-healthcheck')?.command).toEqual([
        '/osm-healthcheck',
      ]);
      expect(warnings.join('\n')).toMatch(
        namespace === 'after'
          ? /osm-edge \(or OSM\) injected this pod after us/
          : /left untouched: osm-edge \(or OSM\)/,
      );
    },
    60_000,
  );
});
