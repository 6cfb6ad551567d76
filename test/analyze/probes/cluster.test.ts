// `osm-healthcheck analyze --probes` (the built CLI) against a real kube-apiserver: a Deployment for each static
// fault and a sound one, one with several faults whose fixes set one field and different ones, one injected by
// the companion (its table holds the original checks), a Service in front of them, pod status written through
// the status subresource and kubelet's events, as kubelet writes them. Each faulty workload is named with its
// rules; the sound one is not; with no live source, two replicas restarted together by liveness are named from
// the record, exit 1. Then each workload's one printed patch, run as printed by the real kubectl against the API
// server, and a rollout of the new template (no controller runs here: the test writes what it would), clears
// every finding it merges.

import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { ENVTEST_NEEDS, type Envtest } from '../../helpers/envtest.js';
import { KUBECTL_BIN, skipWithoutKubectl } from '../../helpers/kustomize.js';
import { skipWithout } from '../../helpers/system-tools.js';
import { type ProbesCluster, probesCluster, writeLivenessEvents, writeRestart } from './probes-cluster.js';

type Json = Record<string, unknown>;

const NS = 'probes';
const http = (path: string, extra: Json = {}) => ({ httpGet: { path, port: 8080 }, ...extra });

/** The app container's probes of each workload, named for what it shows. */
const TEMPLATES: Record<string, Json> = {
  sound: { readinessProbe: http('/ready', { periodSeconds: 5 }), livenessProbe: http('/live') },
  endorsed: { readinessProbe: http('/healthz'), livenessProbe: http('/healthz', { failureThreshold: 6 }) },
  identical: { readinessProbe: http('/healthz'), livenessProbe: http('/healthz') },
  unready: { livenessProbe: http('/live') },
  slowboot: { readinessProbe: http('/ready'), livenessProbe: http('/live', { initialDelaySeconds: 120 }) },
  twitchy: { readinessProbe: http('/ready'), livenessProbe: http('/live', { periodSeconds: 1 }) },
  scripted: { readinessProbe: { exec: { command: ['cat', '/tmp/ready'] } }, livenessProbe: http('/live') },
  // Three faults: two fixes raise liveness' failureThreshold, a third adds a startup probe and drops the delay.
  tangled: {
    readinessProbe: http('/healthz'),
    livenessProbe: http('/healthz', { periodSeconds: 1, initialDelaySeconds: 120 }),
  },
  // A short liveness budget, and (once kubelet's record says so) both replicas restarted by it together.
  restarted: { readinessProbe: http('/ready'), livenessProbe: http('/live', { periodSeconds: 5 }) },
};

const EXPECTED: Record<string, string[]> = {
  sound: [],
  endorsed: [],
  identical: ['liveness-not-after-readiness'],
  unready: ['liveness-without-readiness'],
  slowboot: ['startup-in-initial-delay'],
  twitchy: ['liveness-budget-short'],
  scripted: ['exec-probe'],
  tangled: ['liveness-not-after-readiness', 'startup-in-initial-delay', 'liveness-budget-short'],
  restarted: ['liveness-budget-short'],
  injected: ['liveness-not-after-readiness'],
};

/** What the webhook writes for `identical`: kubelet asks the companion, whose table holds the original check. */
function injectedSpec(): Json {
  const rewritten = (kind: string, port: number) => ({
    httpGet: { path: `/osm-healthcheck/${kind}/app`, port },
  });
  const original = { httpGet: { path: '/healthz', port: 8080 } };
  return {
    containers: [
      {
        name: 'app',
        image: 'app',
        livenessProbe: rewritten('liveness', 15901),
        readinessProbe: rewritten('readiness', 15902),
      },
      {
        name: 'osm-healthcheck',
        image: 'osm-healthcheck',
        args: ['serve'],
        env: [
          {
            name: 'OSM_HEALTHCHECK_PROBES',
            value: JSON.stringify({ liveness: { app: original }, readiness: { app: original } }),
          },
        ],
      },
    ],
  };
}

interface Report {
  notes: string[];
  needsAction: boolean;
  workloads: {
    kind: string;
    name: string;
    findings: { rule: string; fix: string | null; evidence: string; change: Json | null }[];
    changes: { container: string; change: Json }[];
    fix: string | null;
  }[];
}

const skip =
  skipWithout('analyze --probes against a real kube-apiserver', ENVTEST_NEEDS) ||
  skipWithoutKubectl('analyze --probes: its printed kubectl patches');

describe.skipIf(skip)('analyze --probes against a real kube-apiserver', () => {
  let cluster: ProbesCluster;
  let env: Envtest;
  let kubeconfig: string;
  const revisions = new Map<string, number>();

  /** The ReplicaSet of the Deployment's current template and its pods, as the Deployment controller makes them. */
  async function rollout(name: string, spec?: Json): Promise<void> {
    const deploy = await env.admin.get(`/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
    const template = (deploy.spec as Json).template as { metadata: Json; spec: Json };
    const revision = (revisions.get(name) ?? 0) + 1;
    revisions.set(name, revision);
    const owner = (kind: string, object: Json) => ({
      apiVersion: 'apps/v1',
      kind,
      name: (object.metadata as Json).name,
      uid: (object.metadata as Json).uid,
      controller: true,
    });
    const rs = await env.admin.create(`/apis/apps/v1/namespaces/${NS}/replicasets`, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: `${name}-r${revision}`, ownerReferences: [owner('Deployment', deploy)] },
      spec: { selector: (deploy.spec as Json).selector, template },
    });
    for (const old of [0, 1].map((i) => `${name}-r${revision - 1}-${i}`)) {
      await env.admin.request('DELETE', `/api/v1/namespaces/${NS}/pods/${old}?gracePeriodSeconds=0`);
    }
    for (const i of [0, 1]) {
      await env.admin.create(`/api/v1/namespaces/${NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${name}-r${revision}-${i}`,
          labels: template.metadata.labels,
          ownerReferences: [owner('ReplicaSet', rs)],
        },
        spec: spec ?? template.spec,
      });
    }
  }

  async function deployment(name: string, probes: Json, spec?: Json): Promise<void> {
    const labels = { app: name, tier: 'web' };
    await env.admin.create(`/apis/apps/v1/namespaces/${NS}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'app', ...probes }] } },
      },
    });
    await rollout(name, spec);
  }

  const analyze = async (...args: string[]) => {
    const exit = await cluster.analyze(...args);
    return { ...exit, report: (args.includes('json') ? JSON.parse(exit.stdout) : undefined) as Report };
  };
  const rulesOf = (report: Report) =>
    Object.fromEntries(report.workloads.map((w) => [w.name, w.findings.map((f) => f.rule)]));

  beforeAll(async () => {
    cluster = await probesCluster(NS);
    env = cluster.env;
    kubeconfig = cluster.kubeconfig;
    await env.admin.create(`/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { tier: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    for (const [name, probes] of Object.entries(TEMPLATES)) await deployment(name, probes);
    await deployment('injected', TEMPLATES.identical as Json, injectedSpec());
    // Kubelet's record of a restart, as it writes it: through the status subresource; no event blames liveness
    // (an OOM kill, a crash).
    await writeRestart(env, NS, 'twitchy-r1-0');
    // A restart two hours ago: its events, if liveness made it, are gone.
    await writeRestart(env, NS, 'sound-r1-1', { endedAt: new Date(Date.now() - 2 * 3600_000) });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('names each faulty workload with its rule and leaves the sound ones alone, exit 0 (advice)', async () => {
    const { code, report, stderr } = await analyze('-o', 'json');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(rulesOf(report)).toEqual(EXPECTED);
    expect(report.notes).toEqual([
      "no live data (--prometheus URL or --companion-metrics N): static rules, and restarts from the pods' status and kubelet's events",
    ]);
    // Without the companion's counts or kubelet's events, a restart is not blamed on liveness (it may be an OOM kill).
    expect(report.needsAction).toBe(false);
  });

  it('says when the record of a restart is gone, over a window longer than events live', async () => {
    const { code, report } = await analyze('--window', '6h', '-o', 'json');
    expect(code).toBe(0);
    expect(report.notes).toContain(
      `${NS}/Deployment/sound: restarts of app on sound-r1-1 stand unattributed: they ended over an hour ago, and kubelet's events live 1 h by default (the API server's --event-ttl)`,
    );
  });

  it('says the same in its table, one patch per workload, and fails with --fail-on probes', async () => {
    const { code, stdout } = await analyze('--fail-on', 'probes');
    expect(code).toBe(1);
    expect(stdout).toContain(
      "PROBES    static rules, and restarts from kubelet's record (the pods' status, its events)",
    );
    expect(stdout).toMatch(/probes\s+Deployment\/identical\s+liveness-not-after-readiness\s+app\/liveness/);
    expect(stdout).not.toMatch(/Deployment\/sound\b/);
    const fixes = stdout.slice(stdout.indexOf('TO FIX:'));
    expect(fixes.match(/kubectl -n probes patch deployment\/tangled /g)).toHaveLength(1);
    expect(fixes).toContain('    liveness-budget-short (app): failureThreshold 31 (31 s)');
  });

  it('with no live source, names the replicas liveness restarted together, from the record, and exits 1', async () => {
    const now = Date.now();
    for (const [i, pod] of ['restarted-r1-0', 'restarted-r1-1'].entries()) {
      await writeRestart(env, NS, pod, { endedAt: new Date(now - 60_000 + i * 20_000) });
      await writeLivenessEvents(env, NS, pod, new Date(now - 150_000), new Date(now - 70_000 + i * 20_000));
    }
    const { code, report, stderr } = await analyze('-o', 'json');
    expect(code).toBe(1);
    expect(stderr).toContain('a liveness probe restarted pods within the window');
    expect(report.needsAction).toBe(true);
    const restarted = report.workloads.find((w) => w.name === 'restarted');
    expect(restarted?.findings.map((f) => f.rule)).toEqual([
      'liveness-budget-short',
      'liveness-restarts',
      'shared-dependency',
    ]);
    const [, restarts, shared] = restarted?.findings ?? [];
    expect(restarts?.evidence).toMatch(
      /^6 restarts of app on 2 pods \(restartCount, the last ended \d\d:\d\d UTC: Error, exit 137\), and kubelet's events: 6 Killing for failed liveness, 18 Unhealthy \(last: "Liveness probe failed: HTTP probe failed with statuscode: 500"\)$/,
    );
    expect(shared?.evidence).toMatch(
      /^liveness restarted all 2 replicas within [23] min \(\d\d:\d\d-\d\d:\d\d UTC, restart times from kubelet's events and the pods' status\): a dependency they share, not the pods$/,
    );
    // Each finding keeps its own change; the workload's one change merges them: failureThreshold once, at the
    // larger value, and the handler swapped beside it.
    expect(restarted?.findings.map((f) => f.change)).toEqual([
      { livenessProbe: { failureThreshold: 6 } },
      { livenessProbe: { failureThreshold: 6 } },
      { livenessProbe: { httpGet: null, grpc: null, tcpSocket: { port: 8080 } } },
    ]);
    expect(restarted?.changes).toEqual([
      {
        list: 'containers',
        container: 'app',
        change: {
          livenessProbe: { failureThreshold: 6, httpGet: null, grpc: null, tcpSocket: { port: 8080 } },
        },
      },
    ]);
  });

  it("clears every finding it merges once each workload's one printed patch is applied and rolled out", async () => {
    const { report } = await analyze('-o', 'json');
    const bin = KUBECTL_BIN as string;
    for (const w of report.workloads.filter((x) => x.name !== 'injected')) {
      if (w.fix === null) continue;
      await new Promise<void>((resolve, reject) =>
        execFile(
          'sh',
          ['-c', w.fix as string],
          { env: { ...process.env, KUBECONFIG: kubeconfig, PATH: `${dirname(bin)}:${process.env.PATH}` } },
          (err, _out, stderr) => (err === null ? resolve() : reject(new Error(`${w.fix}: ${stderr}`))),
        ),
      );
      await rollout(w.name);
    }
    const after = await analyze('-o', 'json');
    expect(rulesOf(after.report)).toEqual({
      ...Object.fromEntries(Object.keys(EXPECTED).map((n) => [n, []])),
      scripted: ['exec-probe'],
      injected: ['liveness-not-after-readiness'],
    });
  });

  it('refuses its flags without --probes, and a window it cannot use', async () => {
    const bare = await runCli(['analyze', '--window', '1h'], { env: { KUBECONFIG: '' } });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--window without --probes');
    const short = await analyze('--window', '30s');
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--window "30s" is not accepted (minutes, hours or days: 5m to 7d)');
  });
});
