// Each namespace's LimitRanges and ResourceQuotas as the webhook keeps them (src/webhook/namespace-rules.ts): from
// a list and watch of each across namespaces on the stand-in API server (RBAC of deploy/webhook/rbac.yaml), known
// only once both were listed, following added, modified and deleted objects, bookmarks and 410 Gone, and keeping
// only what admission reads (spec, and a quota's status).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type NamespaceRules, watchNamespaceRules } from '../../src/webhook/namespace-rules.js';
import { limitRange, resourceQuota } from '../helpers/kube-objects.js';
import { CACHES_ONLY, type KubeStandin, startKubeStandin } from '../helpers/kube-standin.js';
import { captureLog, type LogCapture } from '../helpers/log-capture.js';

const FAST = { firstMs: 20, maxMs: 100 };
const MIN = { type: 'Container', min: { cpu: '100m', memory: '64Mi' } };

let standin: KubeStandin;
let capture: LogCapture;
let rules: NamespaceRules | undefined;

beforeEach(async () => {
  standin = await startKubeStandin(CACHES_ONLY);
  capture = captureLog();
  standin.limitRanges.put(limitRange('shop', 'min', [MIN]));
  standin.resourceQuotas.put(
    resourceQuota('shop', 'adm', { 'requests.cpu': '1', 'limits.cpu': '2' }, { 'requests.cpu': '250m' }),
  );
  standin.resourceQuotas.put(resourceQuota('batch', 'pods', { pods: '10' }));
});
afterEach(async () => {
  rules?.close();
  rules = undefined;
  await standin.close();
});

async function start(watchSeconds?: number): Promise<NamespaceRules> {
  rules = watchNamespaceRules({
    api: { url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile },
    log: capture.log,
    backoff: FAST,
    ...(watchSeconds === undefined ? {} : { watchSeconds }),
  });
  await capture.line((l) => l.msg === 'limitranges listed');
  await capture.line((l) => l.msg === 'resourcequotas listed');
  return rules;
}

describe('namespace rules from list and watch', () => {
  it('known once both are listed: the objects of that namespace, with only what admission reads', async () => {
    const known = (await start()).knowledge('shop');
    expect(known).toEqual({
      state: 'known',
      namespace: 'shop',
      limitRanges: [{ metadata: { name: 'min', namespace: 'shop' }, spec: { limits: [MIN] } }],
      resourceQuotas: [
        {
          metadata: { name: 'adm', namespace: 'shop' },
          spec: { hard: { 'requests.cpu': '1', 'limits.cpu': '2' } },
          status: { hard: { 'requests.cpu': '1', 'limits.cpu': '2' }, used: { 'requests.cpu': '250m' } },
        },
      ],
    });
    // A namespace without any is known to have none; one with only a quota has no LimitRange.
    expect(rules?.knowledge('open')).toEqual({
      state: 'known',
      namespace: 'open',
      limitRanges: [],
      resourceQuotas: [],
    });
    expect(rules?.knowledge('batch')).toMatchObject({
      limitRanges: [],
      resourceQuotas: [{ spec: { hard: { pods: '10' } } }],
    });
    expect(rules?.knowledge(undefined)).toEqual({
      state: 'unknown',
      namespace: '',
      why: 'the admission request names no namespace',
    });
    expect(rules?.notReady()).toBeUndefined();
  });

  it('unknown until both are listed, saying which is missing and why; then known', async () => {
    standin.rbac.denied.add('list resourcequotas');
    rules = watchNamespaceRules({
      api: { url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile },
      log: capture.log,
      backoff: FAST,
    });
    await capture.line((l) => l.msg === 'limitranges listed');
    const failed = await capture.line(
      (l) => l.msg === 'resourcequotas not listed: pods are left untouched until they are',
    );
    expect(failed).toMatchObject({ level: 'warn', attempt: 1 });
    const unknown = rules.knowledge('shop');
    expect(unknown).toEqual({ state: 'unknown', namespace: 'shop', why: rules.notReady() });
    expect(rules.notReady()).toMatch(
      /^resourcequotas not listed yet: list resourcequotas answered 403: resourcequotas is forbidden: User "system:serviceaccount:osm-healthcheck:osm-healthcheck-webhook" cannot list resource "resourcequotas" in API group "" at the cluster scope$/,
    );
    standin.rbac.denied.delete('list resourcequotas');
    await capture.line((l) => l.msg === 'resourcequotas listed');
    expect(rules.knowledge('shop')).toMatchObject({
      state: 'known',
      resourceQuotas: [{ metadata: { name: 'adm' } }],
    });
  });

  it('follows added, modified and deleted objects without listing again', async () => {
    await start();
    const names = (namespace: string) => {
      const k = rules?.knowledge(namespace);
      return k?.state === 'known'
        ? [...k.limitRanges, ...k.resourceQuotas].map((o) => o.metadata?.name).sort()
        : k?.state;
    };
    standin.limitRanges.put(limitRange('shop', 'max', [{ type: 'Container', max: { memory: '128Mi' } }]));
    standin.resourceQuotas.put(resourceQuota('web', 'q', { 'limits.memory': '1Gi' }));
    await expect.poll(() => names('shop')).toEqual(['adm', 'max', 'min']);
    await expect.poll(() => names('web')).toEqual(['q']);
    // The quota controller moves `used` on: the room left changes with every pod.
    standin.resourceQuotas.put(
      resourceQuota('shop', 'adm', { 'requests.cpu': '1', 'limits.cpu': '2' }, { 'requests.cpu': '900m' }),
    );
    await expect
      .poll(() => {
        const k = rules?.knowledge('shop');
        return k?.state === 'known' ? k.resourceQuotas[0]?.status?.used : undefined;
      })
      .toEqual({ 'requests.cpu': '900m' });
    standin.limitRanges.remove('min', 'shop');
    standin.resourceQuotas.remove('q', 'web');
    await expect.poll(() => names('shop')).toEqual(['adm', 'max']);
    await expect.poll(() => names('web')).toEqual([]);
    expect(standin.limitRanges.requests.filter((r) => r === 'list')).toHaveLength(1);
    expect(standin.resourceQuotas.requests.filter((r) => r === 'list')).toHaveLength(1);
  });

  it('watches again from the last bookmark when the API server ends the watch', async () => {
    await start();
    await expect.poll(() => standin.limitRanges.openWatches()).toBe(1);
    const [, first] = standin.limitRanges.requests;
    standin.resourceQuotas.put(resourceQuota('other', 'x', { pods: '1' }));
    standin.limitRanges.bookmark();
    // No log line marks a bookmark: give it time to arrive before the watch ends.
    await new Promise((resolve) => setTimeout(resolve, 200));
    standin.limitRanges.endWatches();
    await expect.poll(() => standin.limitRanges.requests.length).toBe(3);
    const again = Number(standin.limitRanges.requests[2]?.split(' ')[1]);
    expect(again).toBeGreaterThan(Number(first?.split(' ')[1]));
    expect(standin.limitRanges.requests.filter((r) => r === 'list')).toHaveLength(1);
  });

  it('410 Gone: lists again, answering from the old list meanwhile', async () => {
    await start();
    await expect.poll(() => standin.limitRanges.openWatches()).toBe(1);
    standin.limitRanges.endWatches();
    standin.limitRanges.compact();
    standin.limitRanges.put(limitRange('late', 'min', [MIN]));
    await capture.line((l) => l.msg === 'LimitRange watch expired (410 Gone): listing again');
    await expect.poll(() => standin.limitRanges.requests.filter((r) => r === 'list').length).toBe(2);
    await expect
      .poll(() => rules?.knowledge('late'))
      .toMatchObject({ limitRanges: [{ metadata: { name: 'min' } }] });
    expect(rules?.knowledge('shop')).toMatchObject({
      state: 'known',
      limitRanges: [{ metadata: { name: 'min' } }],
    });
  });
});
