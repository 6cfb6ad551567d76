// kube/api's paged list against a real kube-apiserver whose etcd history is compacted under it between two pages:
// the continue token of the next page is then too old, the API server answers 410 Expired, and the list is read
// again at once, from its first page: resumed after the last item handed on (a snapshot reader), or restarted
// from nothing (a reader that keeps what it saw). A list that expires again and again ends in the refusal.
// From 1.34 the API server reads a later page from its watch cache's snapshot (ListFromCacheSnapshot), which no
// etcd compaction expires: the servers before it show the 410.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, apiClient } from '../../src/kube/api/client.js';
import { eachItem, RELISTS } from '../../src/kube/api/paged-list.js';
import { ENVTEST_SERVERS, type Envtest, envtestNeeds, startEnvtest } from '../helpers/envtest.js';
import { bearer } from '../helpers/envtest-client.js';
import { skipWithout } from '../helpers/system-tools.js';

type Json = Record<string, unknown>;

const nameOf = (item: Json) => String((item.metadata as { name?: unknown }).name);

/** Compacts etcd's history up to its newest revision, through etcd's own JSON gateway. */
async function compact(etcdUrl: string): Promise<void> {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { header: { revision: string } };
  };
  const { header } = await call('/v3/kv/range', { key: Buffer.from('/').toString('base64') });
  await call('/v3/kv/compaction', { revision: header.revision, physical: true });
}

const FROM_ETCD = ENVTEST_SERVERS.filter((server) => server.minor < 34);

describe.each(FROM_ETCD.map((server) => ({ server, version: server.version })))(
  'a paged list whose continue token expires (410) on a later page of kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(
      `410 on a later page of a real kube-apiserver ${server.version}`,
      envtestNeeds(server),
    );
    let env: Envtest;
    let client: ApiClient;
    const names = Array.from({ length: 6 }, (_, i) => `p-${i}`);
    const ours = (seen: string[]) => seen.filter((name) => name.startsWith('p-'));

    beforeAll(async () => {
      if (skip) return;
      env = await startEnvtest([], server);
      const ca = readFileSync(env.caFile, 'utf8');
      const token = readFileSync(env.tokenFile('admin'), 'utf8');
      client = apiClient(bearer(env.url, ca, token), { timeoutMs: 10_000, maxBytes: 8 * 1024 * 1024 });
      for (const name of names) {
        await env.admin.create('/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name },
        });
      }
    }, 60_000);
    afterAll(async () => {
      await env?.stop();
    });

    /**
     * The client, with a new namespace made and etcd compacted before a later page is asked for (once, or before
     * every later page), and the status of each page it got.
     */
    const expiring = (late: string[], every: boolean) => {
      const statuses: number[] = [];
      let made = 0;
      const lister: Pick<ApiClient, 'list'> = {
        async list(path, metadataOnly) {
          const name = late[made];
          if (path.includes('continue=') && (every || made === 0) && name !== undefined) {
            made++;
            await env.admin.create('/api/v1/namespaces', {
              apiVersion: 'v1',
              kind: 'Namespace',
              metadata: { name },
            });
            await compact(env.etcdUrl);
          }
          const page = await client.list(path, metadataOnly);
          statuses.push(page.ok ? 200 : page.status);
          return page;
        },
      };
      return { lister, statuses };
    };

    it.skipIf(skip)(
      'resumes after the last item handed on: each item once, in order, the new one too',
      async () => {
        const { lister, statuses } = expiring(['p-9'], false);
        const seen: string[] = [];
        const outcome = await eachItem(lister, '/api/v1/namespaces', (item) => seen.push(nameOf(item)), {
          limit: 2,
        });
        expect(statuses[1]).toBe(410);
        expect(statuses.filter((status) => status !== 200)).toEqual([410]);
        expect(outcome).toMatchObject({ ok: true, count: seen.length });
        expect(ours(seen)).toEqual([...names, 'p-9']);
        expect(new Set(seen).size).toBe(seen.length);
      },
    );

    it.skipIf(skip)(
      'restarts from nothing when the reader keeps what it saw: told once, then the whole list',
      async () => {
        const { lister, statuses } = expiring(['p-a'], false);
        let seen: string[] = [];
        let restarts = 0;
        const outcome = await eachItem(lister, '/api/v1/namespaces', (item) => seen.push(nameOf(item)), {
          limit: 2,
          restart: () => {
            restarts++;
            seen = [];
          },
        });
        expect(statuses[1]).toBe(410);
        expect(restarts).toBe(1);
        expect(outcome).toMatchObject({ ok: true, count: seen.length });
        expect(ours(seen)).toEqual([...names, 'p-9', 'p-a']);
      },
    );

    it.skipIf(skip)(
      'a list whose every later page expires ends in the 410 after RELISTS lists again',
      async () => {
        const late = Array.from({ length: 20 }, (_, i) => `q-${i}`);
        const { lister, statuses } = expiring(late, true);
        const outcome = await eachItem(lister, '/api/v1/namespaces', () => {}, { limit: 2 });
        expect(outcome).toMatchObject({
          ok: false,
          status: 410,
          reason: 'Expired',
          message: expect.stringMatching(/continue.*\(listed again 3 times, expired each time\)$/),
        });
        expect(statuses.filter((status) => status === 410)).toHaveLength(RELISTS + 1);
      },
    );
  },
);
