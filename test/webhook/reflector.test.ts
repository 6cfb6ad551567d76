// The reflector (src/webhook/reflector.ts) under a failing API server, through the caches built on it: a watch that
// keeps failing is retried with growing delays and increasing attempt numbers, and the count starts again only
// after a watch that worked (issue 26 item 4: it was reset before every watch, so a failing watch was retried every
// second, logged as attempt 1). Against the stand-in API server, which enforces deploy/webhook/rbac.yaml.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { retryDelay } from '../../src/kube/api/backoff.js';
import { watchNamespacePolicies } from '../../src/webhook/namespace-policies.js';
import { watchNodeKubelets } from '../../src/webhook/node-kubelets.js';
import { node } from '../helpers/kube-objects.js';
import { CACHES_ONLY, type KubeStandin, startKubeStandin } from '../helpers/kube-standin.js';
import { captureLog, type LogLine } from '../helpers/log-capture.js';

const FAST = { firstMs: 20, maxMs: 200 };

let standin: KubeStandin;
const closers: Array<() => void> = [];
beforeEach(async () => {
  standin = await startKubeStandin(CACHES_ONLY);
});
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await standin.close();
});

const api = () => ({ url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile });

/** The first `count` lines with `msg`, as they come. */
async function lines(capture: ReturnType<typeof captureLog>, msg: string, count: number): Promise<LogLine[]> {
  await expect.poll(() => capture.lines.filter((l) => l.msg === msg).length).toBeGreaterThanOrEqual(count);
  return capture.lines.filter((l) => l.msg === msg).slice(0, count);
}

describe('a watch that keeps failing', () => {
  it('is retried with growing delays and increasing attempt numbers, until a watch works', async () => {
    const capture = captureLog();
    standin.namespaces.put('shop', {});
    standin.rbac.denied.add('watch namespaces');
    const policies = watchNamespacePolicies({
      api: api(),
      defaultLevel: 'privileged',
      log: capture.log,
      backoff: FAST,
    });
    closers.push(policies.close);
    const failed = 'namespace watch failed: Pod Security levels may lag until it is back';
    const failures = await lines(capture, failed, 5);
    expect(failures.map((l) => [l.attempt, l.retryInMs])).toEqual(
      [1, 2, 3, 4, 5].map((attempt) => [attempt, retryDelay(FAST, attempt)]),
    );
    expect(failures.map((l) => [l.attempt, l.retryInMs])).toEqual([
      [1, 20],
      [2, 40],
      [3, 80],
      [4, 160],
      [5, 200],
    ]);
    expect(String(failures[0]?.err)).toContain(
      'watch namespaces answered 403: namespaces is forbidden: User "system:serviceaccount:osm-healthcheck:osm-healthcheck-webhook" cannot watch resource "namespaces"',
    );
    // Each retry waited its delay: the next attempt came no sooner.
    const at = failures.map((l) => Date.parse(String(l.time)));
    for (let i = 1; i < at.length; i += 1) {
      expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(
        (failures[i - 1]?.retryInMs as number) - 5,
      );
    }
    // Listed once: only 410 lists again. Pod Security levels are served from that list meanwhile.
    expect(standin.namespaces.requests.filter((r) => r === 'list')).toHaveLength(1);
    expect(policies.knowledge('shop')).toMatchObject({ state: 'known' });

    // The watch is allowed again and delivers an event: it worked, so the next failure is attempt 1 again.
    standin.rbac.denied.delete('watch namespaces');
    await expect.poll(() => standin.namespaces.openWatches()).toBe(1);
    standin.namespaces.put('new', {});
    await expect.poll(() => policies.knowledge('new').state).toBe('known');
    standin.rbac.denied.add('watch namespaces');
    standin.namespaces.endWatches();
    await expect.poll(() => capture.lines.filter((l) => l.msg === failed).length).toBeGreaterThan(5);
    expect(capture.lines.filter((l) => l.msg === failed)[5]).toMatchObject({ attempt: 1, retryInMs: 20 });
  });

  it('a watch that ends at once without an event (a proxy in the way) is a failure, backed off the same way', async () => {
    const capture = captureLog();
    standin.nodes.put(node('n1', 'v1.33.2'));
    standin.nodes.emptyWatches(true);
    const kubelets = watchNodeKubelets({ api: api(), log: capture.log, backoff: FAST });
    closers.push(kubelets.close);
    const failures = await lines(capture, 'node watch failed: kubelet versions may lag until it is back', 3);
    expect(failures).toEqual(
      [1, 2, 3].map((attempt) =>
        expect.objectContaining({
          attempt,
          retryInMs: retryDelay(FAST, attempt),
          err: 'watch nodes: the watch ended at once, without an event',
        }),
      ),
    );
    expect(kubelets.kubelets(undefined)).toMatchObject({ state: 'known', version: { major: 1, minor: 33 } });
  });

  it('a list that keeps failing is retried the same way, and not ready says why until it works', async () => {
    const capture = captureLog();
    standin.rbac.denied.add('list nodes');
    const kubelets = watchNodeKubelets({ api: api(), log: capture.log, backoff: FAST });
    closers.push(kubelets.close);
    const failures = await lines(
      capture,
      'nodes not listed: kubelet versions are not known until they are',
      3,
    );
    expect(failures.map((l) => l.attempt)).toEqual([1, 2, 3]);
    expect(kubelets.notReady()).toMatch(
      /^nodes not listed yet: list nodes answered 403: nodes is forbidden: /,
    );
    expect(kubelets.kubelets(undefined)).toEqual({ state: 'unknown', why: kubelets.notReady() });
    standin.rbac.denied.delete('list nodes');
    await capture.line((l) => l.msg === 'nodes listed');
    expect(kubelets.notReady()).toBeUndefined();
  });
});

describe('the list', () => {
  it('reads every page (nodes 50 at a time: a node object is large) and keeps only what is needed', async () => {
    const capture = captureLog();
    for (let i = 0; i < 120; i += 1)
      standin.nodes.put(node(`n${String(i).padStart(3, '0')}`, i === 77 ? 'v1.31.4' : 'v1.34.1'));
    const kubelets = watchNodeKubelets({ api: api(), log: capture.log, backoff: FAST });
    closers.push(kubelets.close);
    expect(await capture.line((l) => l.msg === 'nodes listed')).toMatchObject({ nodes: 120 });
    expect(standin.nodes.requests.filter((r) => r === 'list')).toHaveLength(3);
    expect(kubelets.kubelets(undefined)).toEqual({
      state: 'known',
      version: { major: 1, minor: 31 },
      source: 'the oldest of 120 nodes ("n077")',
    });
  });
});
