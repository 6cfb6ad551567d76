// The webhook benchmark (bench/webhook-cluster.mjs, bench/cluster-objects.mjs): its knobs, the limit it reads from
// the Deployment, the objects it fills the API server with, and its table; then `npm run bench -- --webhook` end to
// end at the smallest size, so it keeps working between the runs that fill BENCHMARKS.md. Nothing here judges a
// number: the numbers of so small a run mean nothing.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { namespaceObject, nodeObject } from '../../bench/cluster-objects.mjs';
import { deployedMemoryLimit, renderWebhook, webhookPlan } from '../../bench/webhook-cluster.mjs';
import { ROOT, runScript } from '../helpers/cli.js';
import { ETCD, NEWEST_SERVER } from '../helpers/envtest.js';
import { OPENSSL, skipWithout } from '../helpers/system-tools.js';

// The newest API server, found and checked as the admission suites find it (test/helpers/envtest-binaries.ts).
const skip = skipWithout('the webhook benchmark end to end', [ETCD, OPENSSL, NEWEST_SERVER.need]);

/** Any executable stands for the API server: nothing is started. */
const API = { OSM_HC_KUBE_APISERVER: process.execPath };

describe('the webhook benchmark', () => {
  it('runs 100, 1,000 and 5,000 nodes, 2 rounds, 300 admissions unless told otherwise', () => {
    expect(webhookPlan(API)).toEqual({
      sizes: [100, 1000, 5000],
      rounds: 2,
      posts: 300,
      unlimited: false,
      apiserver: process.execPath,
    });
    expect(webhookPlan({ ...API, BENCH_WEBHOOK_NODES: '50,10', BENCH_WEBHOOK_LIMIT: 'none' })).toMatchObject({
      sizes: [10, 50],
      unlimited: true,
    });
  });

  it.each([
    [{ BENCH_WEBHOOK_NODES: '100,lots' }, /BENCH_WEBHOOK_NODES: not a node count: "lots"/],
    [{ BENCH_WEBHOOK_ROUNDS: '0' }, /BENCH_WEBHOOK_ROUNDS: not a positive whole number: "0"/],
    [{ BENCH_WEBHOOK_POSTS: 'x' }, /BENCH_WEBHOOK_POSTS: not a positive whole number: "x"/],
    [{ BENCH_WEBHOOK_LIMIT: '128Mi' }, /BENCH_WEBHOOK_LIMIT: only "none"/],
    [
      { OSM_HC_KUBE_APISERVER: '/nonexistent' },
      /OSM_HC_KUBE_APISERVER must name an executable kube-apiserver/,
    ],
  ])('refuses %j', (env, error) => {
    expect(() => webhookPlan({ ...API, ...env })).toThrow(error);
  });

  it("reads the webhook container's memory limit from deploy/webhook", () => {
    expect(deployedMemoryLimit()).toBe(256 * 2 ** 20);
    const other =
      'kind: Deployment\nspec: {template: {spec: {containers: [{resources: {limits: {memory: 1Gi}}}]}}}';
    expect(deployedMemoryLimit(other)).toBe(2 ** 30);
    expect(() => deployedMemoryLimit('kind: Deployment\nspec: {}')).toThrow(
      /limits.memory is not like 256Mi/,
    );
  });

  it('fills with nodes of about 10 KB, 40 images, and namespaces with Pod Security labels', () => {
    const node = nodeObject(42);
    expect(JSON.stringify(node).length).toBeGreaterThan(9_000);
    expect(node.status.images).toHaveLength(40);
    expect(nodeObject(43).metadata.name).not.toBe(node.metadata.name);
    expect(namespaceObject(2).metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('renders each measure on the empty and the full cluster, and their ratio', () => {
    const run = (readyMs: number, rss: number) => ({
      readyMs,
      rssReady: rss,
      rssSettled: rss,
      rssAfter: rss,
      peak: rss,
      p50: 1,
      p99: 5,
    });
    const text = renderWebhook({
      node: '20.20.2',
      cli: 'dist/cli.mjs',
      pod: 'a 256 MiB memory cgroup',
      rounds: 1,
      posts: 300,
      fillSeconds: [1],
      sizes: [{ nodes: 100, namespaces: 40, empty: [run(200, 50)], full: [run(400, 60)] }],
    });
    expect(text).toContain('| 100 | 40 | ready (ms) | 200 (200–200) | 400 (400–400) | 2.00 (2.00–2.00) |');
    expect(text).toContain(
      '| 100 | 40 | peak RSS (MiB) | 50.0 (50.0–50.0) | 60.0 (60.0–60.0) | 1.20 (1.20–1.20) |',
    );
  });
});

describe.skipIf(skip)('npm run bench -- --webhook', () => {
  it('fills a real API server, measures a webhook on it and on an empty one, and leaves BENCHMARKS.md alone for another build', async () => {
    const before = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8');
    const env = {
      OSM_HC_KUBE_APISERVER: await NEWEST_SERVER.path(),
      BENCH_CLI: 'dist/cli.mjs',
      BENCH_WEBHOOK_NODES: '5',
      BENCH_WEBHOOK_ROUNDS: '1',
      BENCH_WEBHOOK_POSTS: '5',
    };
    const { code, stdout, stderr } = await runScript('bench/run.mjs', ['--webhook'], {
      env,
      timeoutMs: 110_000,
    });
    expect(code, stderr).toBe(0);
    for (const measure of ['ready (ms)', 'RSS once ready (MiB)', 'peak RSS (MiB)', 'admission p99 (ms)']) {
      expect(stdout).toMatch(new RegExp(`\\| 5 \\| 2 \\| ${measure.replace(/[()]/g, '\\$&')} \\| \\d`));
    }
    expect(stdout).not.toContain('NaN');
    expect(stderr).toContain('BENCHMARKS.md left as it was');
    expect(readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8')).toBe(before);
  }, 120_000);
});
