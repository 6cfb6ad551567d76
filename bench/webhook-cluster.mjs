// `npm run bench -- --webhook`: the webhook (`osm-healthcheck webhook`, the built CLI) in a big cluster. Two real
// API servers (bench/envtest.mjs): one empty but for the namespace the admissions name, one filled step by step with N nodes and N × 0.4 namespaces
// (each with a LimitRange and a ResourceQuota, status written). At each size, rounds that start a webhook on the
// empty one and on the full one back to back, and report per process: time to /readyz, RSS once ready and its peak,
// and the webhook's own time per admission (the durationMs of its log line) over a few hundred AdmissionReviews.

import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { parseAllDocuments } from 'yaml';
import { podCgroup } from './cgroup.mjs';
import {
  limitRangeObject,
  namespaceObject,
  nodeObject,
  resourceQuotaObject,
  resourceQuotaStatus,
} from './cluster-objects.mjs';
import { apiserverBinary, startEnvtest } from './envtest.mjs';
import { memory, spawnCommand, stop } from './procs.mjs';
import { formatSummary, percentile, ratioSummary, summary } from './stats.mjs';

/** The CLI under test, as for the other parts (contenders.mjs, which makes its cgroup as it loads). */
const CLI = process.env.BENCH_CLI ?? 'dist/cli.mjs';
const say = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Namespaces per node: 2,000 namespaces at 5,000 nodes. */
const NAMESPACES_PER_NODE = 0.4;
const FILL_CONCURRENCY = 32;
const DEPLOYMENT = new URL('../deploy/webhook/deployment.yaml', import.meta.url);
const REVIEW = JSON.parse(
  readFileSync(new URL('../test/fixtures/webhook/http-get.json', import.meta.url), 'utf8'),
);

/** The run's knobs from the environment: sizes, rounds per size, admissions per webhook. */
export function webhookPlan(env) {
  const sizes = (env.BENCH_WEBHOOK_NODES ?? '100,1000,5000').split(',').map((text) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_WEBHOOK_NODES: not a node count: "${text}"`);
    return n;
  });
  const whole = (name, fallback) => {
    const text = env[name] ?? fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name}: not a positive whole number: "${text}"`);
    return value;
  };
  const rounds = whole('BENCH_WEBHOOK_ROUNDS', '2');
  const posts = whole('BENCH_WEBHOOK_POSTS', '300');
  // `none`: the webhook as a bare process, V8 sized from the machine's memory (no pod limit).
  const unlimited = env.BENCH_WEBHOOK_LIMIT === 'none';
  if (env.BENCH_WEBHOOK_LIMIT !== undefined && !unlimited)
    throw new Error(
      `BENCH_WEBHOOK_LIMIT: only "none" (else the Deployment's limit), got "${env.BENCH_WEBHOOK_LIMIT}"`,
    );
  const apiserver = apiserverBinary(env);
  return { sizes: [...sizes].sort((a, b) => a - b), rounds, posts, unlimited, apiserver };
}

/**
 * The webhook's pod: a memory cgroup of the Deployment's limit, so Node sizes V8's heap as in the pod (under any
 * limit up to 512 MiB: 1 MiB semi-spaces, a 256 MiB old generation); where none can be made, flags that say the same.
 */
export function webhookPod(limitBytes) {
  const { cgroup, reason } = podCgroup(limitBytes);
  const mib = limitBytes / 2 ** 20;
  if (cgroup === undefined) {
    const flags = ['--max-semi-space-size=1', '--max-old-space-size=256'];
    return {
      method: `V8 flags \`${flags.join(' ')}\` (${reason})`,
      flags,
      wrap: undefined,
      remove: () => {},
    };
  }
  process.once('exit', cgroup.remove);
  return { method: `a ${mib} MiB memory cgroup`, flags: [], wrap: cgroup.wrap, remove: cgroup.remove };
}

const UNITS = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** The webhook container's limits.memory in deploy/webhook/deployment.yaml, in bytes. */
export function deployedMemoryLimit(text = readFileSync(DEPLOYMENT, 'utf8')) {
  const deployment = parseAllDocuments(text)
    .map((doc) => doc.toJS())
    .find((object) => object?.kind === 'Deployment');
  const limit = deployment?.spec?.template?.spec?.containers?.[0]?.resources?.limits?.memory;
  const match = /^(\d+)(Ki|Mi|Gi)$/.exec(String(limit));
  if (match === null)
    throw new Error(`deploy/webhook/deployment.yaml: limits.memory is not like 256Mi: ${limit}`);
  return Number(match[1]) * UNITS[match[2]];
}

/** `count` calls of `make(i)` for i in [from, to), at most FILL_CONCURRENCY at once; throws on any non-2xx. */
export async function pool(from, to, make) {
  let next = from;
  const worker = async () => {
    while (next < to) await make(next++);
  };
  await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
}

export async function created(cluster, path, object) {
  const answer = await cluster.request('POST', path, object);
  if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
  return JSON.parse(answer.text);
}

/** Nodes [from, to) and namespaces [nsFrom, nsTo), each namespace with a LimitRange and a ResourceQuota. */
export async function fill(cluster, nodes, namespaces) {
  await pool(nodes.from, nodes.to, (i) => created(cluster, '/api/v1/nodes', nodeObject(i)));
  await pool(namespaces.from, namespaces.to, async (i) => {
    const namespace = namespaceObject(i);
    const name = namespace.metadata.name;
    await created(cluster, '/api/v1/namespaces', namespace);
    await created(cluster, `/api/v1/namespaces/${name}/limitranges`, limitRangeObject(name));
    const quota = await created(
      cluster,
      `/api/v1/namespaces/${name}/resourcequotas`,
      resourceQuotaObject(name),
    );
    const path = `/api/v1/namespaces/${name}/resourcequotas/${quota.metadata.name}/status`;
    const answer = await cluster.request('PUT', path, { ...quota, status: resourceQuotaStatus(i) });
    if (answer.status !== 200) throw new Error(`PUT ${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
  });
}

function get(url, ca, agent) {
  return new Promise((resolve, reject) => {
    httpsRequest(url, { ca, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    })
      .on('error', reject)
      .end();
  });
}

function post(url, ca, agent, body) {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: 'POST', ca, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One webhook against `cluster`: ready time, memory, and its own time for `posts` admissions in `namespace`. */
export async function measureWebhook(cluster, namespace, posts, pod, cli = CLI) {
  const started = performance.now();
  const argv = [
    process.execPath,
    ...pod.flags,
    cli,
    'webhook',
    '--port=0',
    '--metrics-port=0',
    '--host=127.0.0.1',
    `--tls-cert=${cluster.certFile}`,
    `--tls-key=${cluster.keyFile}`,
    `--kube-api=${cluster.url}`,
    `--kube-ca=${cluster.caFile}`,
    `--kube-token-file=${cluster.tokenFile}`,
    '--image=registry.example.com/osm-healthcheck:bench',
  ];
  const child = spawnCommand(pod.wrap === undefined ? argv : pod.wrap(argv), { KUBERNETES_SERVICE_HOST: '' });
  const lines = [];
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    let end = pending.indexOf('\n');
    while (end >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      try {
        lines.push(JSON.parse(line));
      } catch {}
      end = pending.indexOf('\n');
    }
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    let port;
    let readyMs;
    while (readyMs === undefined) {
      if (child.exitCode !== null) throw new Error(`webhook exited with ${child.exitCode}`);
      if (performance.now() - started > 120_000) throw new Error('webhook not ready within 120 s');
      port ??= lines.find((l) => l.msg === 'webhook serving')?.port;
      if (port !== undefined) {
        const status = await get(`https://127.0.0.1:${port}/readyz`, cluster.ca, agent).catch(() => 0);
        if (status === 200) readyMs = performance.now() - started;
      }
      if (readyMs === undefined) await sleep(20);
    }
    const atReady = memory(child.pid);
    // Settled: what it holds once the lists' garbage is collected, as it stays between admissions.
    await sleep(3000);
    const settled = memory(child.pid);
    const url = `https://127.0.0.1:${port}/mutate`;
    const warmUp = 30;
    for (let k = 0; k < warmUp + posts; k++) {
      const review = {
        ...REVIEW,
        request: {
          ...REVIEW.request,
          uid: `bench-${k}`,
          namespace,
          object: { ...REVIEW.request.object, metadata: { ...REVIEW.request.object.metadata, namespace } },
        },
      };
      const status = await post(url, cluster.ca, agent, JSON.stringify(review));
      if (status !== 200) throw new Error(`POST /mutate answered ${status}`);
    }
    await sleep(200);
    const admissions = lines.filter((l) => l.msg === 'admission').map((l) => l.durationMs);
    if (admissions.length !== warmUp + posts)
      throw new Error(`${admissions.length} admission lines for ${warmUp + posts} posts`);
    const own = admissions.slice(warmUp);
    const after = memory(child.pid);
    return {
      readyMs,
      rssReady: atReady.rss,
      rssSettled: settled.rss,
      rssAfter: after.rss,
      peak: after.hwm,
      p50: percentile(own, 0.5),
      p99: percentile(own, 0.99),
    };
  } finally {
    agent.destroy();
    await stop(child);
  }
}

const METRICS = [
  ['readyMs', 'ready (ms)', 0],
  ['rssSettled', 'RSS once ready (MiB)', 1],
  ['peak', 'peak RSS (MiB)', 1],
  ['rssAfter', 'RSS after admissions (MiB)', 1],
  ['p50', 'admission p50 (ms)', 2],
  ['p99', 'admission p99 (ms)', 2],
];

/** The tables: per size, each metric on the empty and the full cluster (median, min–max) and full/empty. */
export function renderWebhook(results) {
  const out = [
    `Node ${results.node}, ${results.cli}, in ${results.pod}; ${results.rounds} rounds per size (median, min–max), ` +
      `${results.posts} admissions per webhook after 30 not counted; fill ${results.fillSeconds.join(' + ')} s.`,
    '',
    '| nodes | namespaces | measure | empty cluster | this cluster | ratio |',
    '|---:|---:|---|---:|---:|---:|',
  ];
  for (const size of results.sizes) {
    for (const [key, label, decimals] of METRICS) {
      const empty = size.empty.map((r) => r[key]);
      const full = size.full.map((r) => r[key]);
      out.push(
        `| ${size.nodes} | ${size.namespaces} | ${label} | ${formatSummary(summary(empty), decimals)} | ` +
          `${formatSummary(summary(full), decimals)} | ${formatSummary(ratioSummary(full, empty), 2)} |`,
      );
    }
  }
  return out.join('\n');
}

export async function runWebhookBench(plan) {
  const results = {
    node: process.versions.node,
    cli: CLI,
    rounds: plan.rounds,
    posts: plan.posts,
    sizes: [],
  };
  results.fillSeconds = [];
  const pod = plan.unlimited
    ? { method: 'no memory limit (V8 sized from the machine)', flags: [], wrap: undefined, remove: () => {} }
    : webhookPod(deployedMemoryLimit());
  results.pod = pod.method;
  say(`webhook bench: ${plan.sizes.join(', ')} nodes, ${plan.rounds} rounds each, in ${pod.method}`);
  const empty = await startEnvtest(plan.apiserver);
  const full = await startEnvtest(plan.apiserver).catch(async (err) => {
    await empty.stop();
    throw err;
  });
  try {
    // The namespace the admissions name, the same on both (a LimitRange and a ResourceQuota): the empty cluster
    // holds it and nothing else, so the two differ only in what else the webhook keeps.
    const probeNamespace = namespaceObject(0).metadata.name;
    await fill(empty, { from: 0, to: 0 }, { from: 0, to: 1 });
    let nodes = 0;
    let namespaces = 0;
    for (const size of plan.sizes) {
      const wanted = Math.round(size * NAMESPACES_PER_NODE);
      const began = performance.now();
      await fill(full, { from: nodes, to: size }, { from: namespaces, to: wanted });
      results.fillSeconds.push(Math.round((performance.now() - began) / 1000));
      say(`${size} nodes, ${wanted} namespaces: filled in ${results.fillSeconds.at(-1)} s`);
      nodes = size;
      namespaces = wanted;
      const row = { nodes: size, namespaces: wanted, empty: [], full: [] };
      for (let round = 0; round < plan.rounds; round++) {
        // Alternating which goes first, so a drift of the machine's load does not favour one.
        const order = round % 2 === 0 ? ['empty', 'full'] : ['full', 'empty'];
        for (const which of order) {
          const r = await measureWebhook(which === 'empty' ? empty : full, probeNamespace, plan.posts, pod);
          row[which].push(r);
          say(`  round ${round + 1} ${which}: ${JSON.stringify(r)}`);
        }
      }
      results.sizes.push(row);
    }
  } finally {
    await Promise.all([empty.stop(), full.stop()]);
    pod.remove();
  }
  return results;
}
