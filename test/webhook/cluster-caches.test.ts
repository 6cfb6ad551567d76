// What the webhook knows of the cluster besides Pod Security: each namespace's LimitRanges and ResourceQuotas and
// the nodes' kubelet versions, from lists and watches (reflector.ts), asked at every admission. /readyz waits until
// all four collections were listed and says which are missing; the webhook needs exactly the RBAC of
// deploy/webhook/rbac.yaml for them (the stand-in API server enforces it).

import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { buildWebhookApp } from '../../src/webhook/app.js';
import { parseAdmissionReview } from '../../src/webhook/review.js';
import { WATCHED_RESOURCES } from '../helpers/kube-objects.js';
import { CACHES_ONLY, type KubeStandin, startKubeStandin } from '../helpers/kube-standin.js';
import { makeTestCert } from '../helpers/tls.js';
import { allListed, type Harness, REWRITE, startHarness } from './harness.js';

type Json = Record<string, unknown>;
const FAST = { firstMs: 20, maxMs: 100 };
const review = JSON.parse(
  readFileSync(new URL('../fixtures/webhook/http-get.json', import.meta.url), 'utf8'),
) as { request: Json & { object: Json & { spec: Json } } };

const withRequest = (request: Json) => ({ ...review, request: { ...review.request, ...request } });

describe("the pod's node, from the AdmissionReview", () => {
  const pod = review.request.object;
  it.each([
    {
      name: 'a pod bound to a node (DaemonSet, static pod)',
      object: { ...pod, spec: { ...pod.spec, nodeName: 'n7' } },
      nodeName: 'n7',
    },
    { name: 'a pod to be scheduled', object: pod, nodeName: undefined },
    {
      name: 'an empty nodeName',
      object: { ...pod, spec: { ...pod.spec, nodeName: '' } },
      nodeName: undefined,
    },
    {
      name: 'a workload: its pods go wherever the scheduler puts them',
      object: { metadata: { name: 'web' }, spec: { nodeName: 'n7', template: { spec: { nodeName: 'n7' } } } },
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      nodeName: undefined,
    },
  ])('$name', ({ object, kind, nodeName }) => {
    const parsed = parseAdmissionReview(withRequest({ object, ...(kind === undefined ? {} : { kind }) }));
    expect(parsed.ok && parsed.request.nodeName).toBe(nodeName);
  });
});

describe('every admission asks what is known now', () => {
  it("the namespace's rules, the kubelets of the pod's node, and the companion's CPU limit ride into the rewrite", async () => {
    const cert = makeTestCert();
    const asked: string[] = [];
    const app = buildWebhookApp({
      tls: cert,
      image: REWRITE.image,
      placement: 'first',
      cluster: () => ({ state: 'unknown', why: 'not asked' }),
      podSecurity: () => ({ state: 'unchecked' }),
      namespaceRules: (namespace) => {
        asked.push(`rules ${namespace}`);
        return { state: 'unchecked' };
      },
      kubelets: (nodeName) => {
        asked.push(`kubelets ${nodeName}`);
        return { state: 'unchecked' };
      },
      companionCpuLimit: '500m',
      log: createLogger('silent'),
      notReady: () => undefined,
      draining: () => false,
    });
    try {
      const bound = { ...review.request.object, spec: { ...review.request.object.spec, nodeName: 'n7' } };
      for (const request of [{ namespace: 'shop' }, { namespace: 'batch', object: bound }]) {
        const answer = await app.inject({ method: 'POST', url: '/mutate', payload: withRequest(request) });
        expect(answer.statusCode).toBe(200);
      }
      expect(asked).toEqual(['rules shop', 'kubelets undefined', 'rules batch', 'kubelets n7']);
    } finally {
      await app.close();
      cert.cleanup();
    }
  });
});

describe('the webhook against an API server', () => {
  let standin: KubeStandin;
  let harness: Harness | undefined;
  beforeEach(async () => {
    standin = await startKubeStandin(CACHES_ONLY);
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await standin.close();
  });
  const start = async () => {
    harness = await startHarness({
      kube: {
        api: { url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile },
        backoff: FAST,
      },
    });
    return harness;
  };

  it('needs exactly the rules of deploy/webhook/rbac.yaml: every collection listed and watched, nothing refused', async () => {
    const webhook = await start();
    await allListed(webhook);
    for (const resource of WATCHED_RESOURCES) {
      await expect.poll(() => standin.log).toContain(`watch ${resource} 200`);
      expect(standin.log).toContain(`list ${resource} 200`);
    }
    expect(standin.log.filter((line) => !line.endsWith(' 200'))).toEqual([]);
    expect((await webhook.get('/readyz')).status).toBe(200);
  });

  it('/readyz: 503 naming each collection not listed yet, and why; 200 once all four are', async () => {
    standin.rbac.denied.add('list limitranges');
    standin.rbac.denied.add('list nodes');
    const webhook = await start();
    await webhook.logLine((l) => l.msg === 'namespaces listed');
    await webhook.logLine((l) => l.msg === 'resourcequotas listed');
    await webhook.logLine((l) => String(l.msg).startsWith('limitranges not listed'));
    await webhook.logLine((l) => String(l.msg).startsWith('nodes not listed'));
    const answer = await webhook.get('/readyz');
    expect(answer.status).toBe(503);
    const user = 'User "system:serviceaccount:osm-healthcheck:osm-healthcheck-webhook"';
    expect(answer.body).toBe(
      `not ready: limitranges not listed yet: list limitranges answered 403: limitranges is forbidden: ${user} cannot list resource "limitranges" in API group "" at the cluster scope; nodes not listed yet: list nodes answered 403: nodes is forbidden: ${user} cannot list resource "nodes" in API group "" at the cluster scope\n`,
    );
    standin.rbac.denied.delete('list limitranges');
    await webhook.logLine((l) => l.msg === 'limitranges listed');
    await expect
      .poll(async () => (await webhook.get('/readyz')).body)
      .toMatch(/^not ready: nodes not listed yet: /);
    standin.rbac.denied.delete('list nodes');
    await expect.poll(async () => (await webhook.get('/readyz')).status).toBe(200);
  });

  it('without an API server: no watch, ready at once', async () => {
    harness = await startHarness();
    expect((await harness.get('/readyz')).status).toBe(200);
    const serving = await harness.logLine((l) => l.msg === 'webhook serving');
    expect(serving.clusterWatch).toBe(false);
  });
});
