// analyze's requests: an answer or the API server's refusal as a value, warnings as kubectl prints them, and
// lists read page by page against a real kube-apiserver (limit and continue).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Json } from '../../src/analyze/kube-client.js';
import { eachItem } from '../../src/analyze/paged-list.js';
import { replyOf, warningsOf } from '../../src/kube/api/reply.js';
import { tcpApp } from '../helpers/apps.js';
import { ENVTEST_NEEDS, type Envtest, startEnvtest } from '../helpers/envtest.js';
import { kubeconfigFor } from '../helpers/kubeconfig.js';
import { skipWithout } from '../helpers/system-tools.js';

describe('warningsOf', () => {
  it.each([
    { header: undefined, texts: [] },
    { header: '299 - "osm-healthcheck: left untouched"', texts: ['osm-healthcheck: left untouched'] },
    {
      header: ['299 - "one, with a comma"', '299 - "two \\"quoted\\""'],
      texts: ['one, with a comma', 'two "quoted"'],
    },
  ])('$header', ({ header, texts }) => {
    expect(warningsOf(header)).toEqual(texts);
  });
});

describe('replyOf', () => {
  it('a 2xx object is the body; a Status is the refusal with its reason and message; anything else says what came', () => {
    expect(replyOf(200, '{"kind":"Pod"}')).toEqual({
      ok: true,
      body: { kind: 'Pod' },
      warnings: [],
    });
    expect(replyOf(403, '{"kind":"Status","reason":"Forbidden","message":"pods is forbidden"}')).toEqual({
      ok: false,
      status: 403,
      reason: 'Forbidden',
      message: 'pods is forbidden',
    });
    expect(replyOf(502, 'Bad Gateway\n')).toEqual({
      ok: false,
      status: 502,
      reason: 'HTTP 502',
      message: 'Bad Gateway',
    });
    expect(replyOf(200, 'not json')).toMatchObject({ ok: false, status: 200 });
  });
});

describe('connect', () => {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-kube-client-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an unknown --context names the ones there are', () => {
    const file = join(dir, 'one');
    writeFileSync(file, kubeconfigFor('https://127.0.0.1:1', 't'));
    expect(() => connect({ kubeconfig: file, context: 'prod', timeoutMs: 1000 })).toThrow(
      '--context "prod": no such context in the kubeconfig (test)',
    );
  });

  it('a server that never answers: a ClusterError within the deadline', async () => {
    const silent = await tcpApp(() => {});
    try {
      const file = join(dir, 'silent');
      writeFileSync(file, kubeconfigFor(`https://127.0.0.1:${silent.port}`, 't'));
      const client = connect({ kubeconfig: file, timeoutMs: 300 });
      await expect(client.get('/version')).rejects.toMatchObject({
        code: 'OSM_HC_CLUSTER',
        message: expect.stringMatching(/cannot reach the API server .* no answer within 300 ms/),
      });
    } finally {
      await silent.close();
    }
  });
});

describe('eachItem against a real kube-apiserver', () => {
  const skip = skipWithout('paged lists against a real kube-apiserver', ENVTEST_NEEDS);
  let env: Envtest;
  let dir: string;
  beforeAll(async () => {
    if (skip) return;
    env = await startEnvtest();
    dir = mkdtempSync(join(tmpdir(), 'osm-hc-paged-'));
    for (let i = 0; i < 7; i++) {
      await env.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: `ns-${i}`, labels: { shard: String(i % 2) } },
      });
    }
  }, 60_000);
  afterAll(async () => {
    await env?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)('reads every item, a page of `limit` at a time, through continue', async () => {
    const file = join(dir, 'kubeconfig');
    writeFileSync(file, kubeconfigFor(env.url, readFileSync(env.tokenFile('admin'), 'utf8'), env.caFile));
    const client = connect({ kubeconfig: file, timeoutMs: 10_000 });
    const names: string[] = [];
    const outcome = await eachItem(
      client,
      '/api/v1/namespaces',
      (ns) => names.push(String((ns.metadata as { name: string }).name)),
      { limit: 2 },
    );
    expect(outcome.ok).toBe(true);
    expect(names.filter((n) => n.startsWith('ns-'))).toEqual([
      'ns-0',
      'ns-1',
      'ns-2',
      'ns-3',
      'ns-4',
      'ns-5',
      'ns-6',
    ]);
    expect(outcome).toMatchObject({ ok: true, count: names.length });
    expect(await eachItem(client, '/api/v1/nope', () => {})).toMatchObject({ ok: false, status: 404 });
  });
  it.skipIf(skip)(
    'asks for metadata only: each item is its metadata, labels and all, and no spec',
    async () => {
      const file = join(dir, 'kubeconfig');
      writeFileSync(file, kubeconfigFor(env.url, readFileSync(env.tokenFile('admin'), 'utf8'), env.caFile));
      const client = connect({ kubeconfig: file, timeoutMs: 10_000 });
      const items: Json[] = [];
      const outcome = await eachItem(client, '/api/v1/namespaces', (ns) => items.push(ns), {
        limit: 3,
        metadataOnly: true,
      });
      expect(outcome).toMatchObject({ ok: true, count: items.length });
      const ns3 = items.find((ns) => (ns.metadata as { name: string }).name === 'ns-3');
      expect(ns3).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { labels: { shard: '1' } } });
      expect(items.filter((ns) => 'spec' in ns || 'status' in ns)).toEqual([]);
      expect(
        items.filter((ns) => String((ns.metadata as { name: string }).name).startsWith('ns-')),
      ).toHaveLength(7);
    },
  );
});
