// The kubelets that may run a pod, as the webhook keeps them (src/webhook/node-kubelets.ts, from src/cluster/node-kubelets.ts): of each node only its
// kubelet version; the pod's own node when it names one, else the oldest kubelet of the cluster; unknown rather than
// a guess. The pure choices in tables, then the list and watch against the stand-in API server.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeletOf, type NodeKubelet, nodeKubelet, oldestKubelet } from '../../src/cluster/node-kubelets.js';
import { type NodeKubelets, watchNodeKubelets } from '../../src/webhook/node-kubelets.js';
import { node } from '../helpers/kube-objects.js';
import { CACHES_ONLY, type KubeStandin, startKubeStandin } from '../helpers/kube-standin.js';
import { captureLog, type LogCapture } from '../helpers/log-capture.js';

const v = (major: number, minor: number) => ({ version: { major, minor } });
const nodes = (entries: Record<string, NodeKubelet>) => new Map(Object.entries(entries));

describe('what is kept of a node', () => {
  it.each([
    { name: 'a release', kubelet: 'v1.33.2', kept: v(1, 33) },
    { name: 'a managed cluster build', kubelet: 'v1.30.14-eks-3abbec1', kept: v(1, 30) },
    { name: 'k3s', kubelet: 'v1.29.0+k3s1', kept: v(1, 29) },
    { name: 'no version', kubelet: '', kept: { unreadable: '""' } },
    { name: 'not a version', kubelet: 'latest', kept: { unreadable: '"latest"' } },
  ])('$name: $kubelet', ({ kubelet, kept }) => {
    // Only the version: the images, conditions and managedFields of a node object are not kept.
    expect(kubeletOf(node('n1', kubelet))).toEqual(kept);
  });

  it('a node without nodeInfo yet (just registered) has no readable version', () => {
    expect(kubeletOf({ metadata: { name: 'n1' }, status: {} })).toEqual({ unreadable: 'null' });
  });
});

describe('the oldest kubelet', () => {
  it.each([
    {
      name: 'mixed, during an upgrade',
      nodes: nodes({ a: v(1, 33), b: v(1, 31), c: v(1, 32) }),
      expected: { state: 'known', version: { major: 1, minor: 31 }, source: 'the oldest of 3 nodes ("b")' },
    },
    {
      name: 'all the same: the first by name',
      nodes: nodes({ z: v(1, 34), m: v(1, 34) }),
      expected: { state: 'known', version: { major: 1, minor: 34 }, source: 'the oldest of 2 nodes ("m")' },
    },
    {
      name: 'one node',
      nodes: nodes({ solo: v(1, 28) }),
      expected: { state: 'known', version: { major: 1, minor: 28 }, source: 'the only node ("solo")' },
    },
    {
      name: 'minor 9 is older than minor 10',
      nodes: nodes({ a: v(1, 10), b: v(1, 9) }),
      expected: { state: 'known', version: { major: 1, minor: 9 }, source: 'the oldest of 2 nodes ("b")' },
    },
    {
      name: 'no nodes',
      nodes: nodes({}),
      expected: { state: 'unknown', why: 'the cluster has no nodes (yet)' },
    },
    {
      name: 'a node whose version cannot be read: never a guess',
      nodes: nodes({ a: v(1, 33), b: { unreadable: '"latest"' } }),
      expected: {
        state: 'unknown',
        why: 'node "b" reports kubelet version "latest", which is no Kubernetes version',
      },
    },
  ])('$name', ({ nodes: all, expected }) => {
    expect(oldestKubelet(all)).toEqual(expected);
  });
});

describe("the pod's own node", () => {
  const all = nodes({ a: v(1, 33), b: v(1, 31), bad: { unreadable: 'null' } });
  it.each([
    {
      name: 'a node seen',
      node: 'a',
      expected: { state: 'known', version: { major: 1, minor: 33 }, source: 'the pod\'s node ("a")' },
    },
    {
      name: 'a node not seen (yet)',
      node: 'new',
      expected: { state: 'unknown', why: 'node "new" is not in the node watch (yet)' },
    },
    {
      name: 'a node without a version',
      node: 'bad',
      expected: {
        state: 'unknown',
        why: 'node "bad" reports kubelet version null, which is no Kubernetes version',
      },
    },
  ])('$name', ({ node: name, expected }) => {
    expect(nodeKubelet(all, name)).toEqual(expected);
  });
});

describe('nodes from list and watch', () => {
  let standin: KubeStandin;
  let capture: LogCapture;
  let kubelets: NodeKubelets;
  beforeEach(async () => {
    standin = await startKubeStandin(CACHES_ONLY);
    capture = captureLog();
  });
  afterEach(async () => {
    kubelets.close();
    await standin.close();
  });
  const start = () => {
    kubelets = watchNodeKubelets({
      api: { url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile },
      log: capture.log,
      backoff: { firstMs: 20, maxMs: 100 },
    });
  };

  it('unknown before the list; then the oldest, following upgrades, new and deleted nodes', async () => {
    for (const [name, version] of [
      ['n1', 'v1.33.1'],
      ['n2', 'v1.32.5'],
      ['n3', 'v1.33.1'],
    ]) {
      standin.nodes.put(node(name as string, version as string));
    }
    standin.rbac.denied.add('list nodes');
    start();
    await capture.line((l) => String(l.msg).startsWith('nodes not listed'));
    expect(kubelets.kubelets(undefined)).toMatchObject({
      state: 'unknown',
      why: expect.stringMatching(/^nodes not listed yet: /),
    });
    expect(kubelets.kubelets('n1')).toMatchObject({ state: 'unknown' });
    standin.rbac.denied.delete('list nodes');
    await capture.line((l) => l.msg === 'nodes listed');
    const oldest = () => kubelets.kubelets(undefined);
    expect(oldest()).toEqual({
      state: 'known',
      version: { major: 1, minor: 32 },
      source: 'the oldest of 3 nodes ("n2")',
    });
    // A pod bound to a node runs on that node's kubelet, whatever the others run.
    expect(kubelets.kubelets('n3')).toEqual({
      state: 'known',
      version: { major: 1, minor: 33 },
      source: 'the pod\'s node ("n3")',
    });
    // The last old node is upgraded: the oldest moves on.
    standin.nodes.put(node('n2', 'v1.33.4'));
    await expect
      .poll(() => oldest())
      .toMatchObject({ version: { major: 1, minor: 33 }, source: 'the oldest of 3 nodes ("n1")' });
    // An old node joins (a node pool not upgraded yet), then leaves.
    standin.nodes.put(node('old', 'v1.28.9'));
    await expect
      .poll(() => oldest())
      .toMatchObject({ version: { major: 1, minor: 28 }, source: 'the oldest of 4 nodes ("old")' });
    expect(kubelets.kubelets('old')).toMatchObject({ version: { major: 1, minor: 28 } });
    standin.nodes.remove('old');
    await expect
      .poll(() => oldest())
      .toMatchObject({ version: { major: 1, minor: 33 }, source: 'the oldest of 3 nodes ("n1")' });
    expect(kubelets.kubelets('old')).toEqual({
      state: 'unknown',
      why: 'node "old" is not in the node watch (yet)',
    });
    // Listed once (the refused lists never reached the collection): the rest came through the watch.
    expect(standin.nodes.requests.filter((r) => r === 'list')).toHaveLength(1);
  });

  it('a cluster without nodes: unknown, not a guess', async () => {
    start();
    await capture.line((l) => l.msg === 'nodes listed');
    expect(kubelets.kubelets(undefined)).toEqual({ state: 'unknown', why: 'the cluster has no nodes (yet)' });
    expect(kubelets.notReady()).toBeUndefined();
  });

  it('410 Gone: lists again', async () => {
    standin.nodes.put(node('n1', 'v1.31.0'));
    start();
    await expect.poll(() => standin.nodes.openWatches()).toBe(1);
    standin.nodes.endWatches();
    standin.nodes.compact();
    standin.nodes.put(node('n2', 'v1.30.0'));
    await capture.line((l) => l.msg === 'node watch expired (410 Gone): listing again');
    await expect.poll(() => kubelets.kubelets(undefined)).toMatchObject({ version: { major: 1, minor: 30 } });
  });
});
