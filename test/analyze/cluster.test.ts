// `osm-healthcheck analyze` (the built CLI) against each real kube-apiserver the project is checked on, on a
// cluster populated the way it happens in life: pods injected by an older image, pods created while the webhook
// was not reachable (the API server fails open past it), opted-out, hostNetwork and a mesh's pods, then a restart
// of what was stale or uncovered, then a caBundle that does not match the serving certificate (as the webhook
// publishes it on its configuration: analyze reads no Secret). The dry run goes through the real API server to the
// running webhook. No controller runs, so this test writes the Deployments,
// ReplicaSets and their pods itself, with the ownerReferences their controllers would write.

import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SERVING_CERT_ANNOTATION } from '../../src/webhook/tls/published-cert.js';
import { runCli } from '../helpers/cli.js';

import { ENVTEST_SERVERS, type Envtest, envtestNeeds, startEnvtest } from '../helpers/envtest.js';
import { makeNamespace } from '../helpers/envtest-namespace.js';
import {
  applyRbac,
  type RunningWebhook,
  registerWebhook,
  startWebhook,
  WEBHOOK_NAMESPACE,
  WEBHOOK_USER,
} from '../helpers/envtest-webhook.js';
import { kubeconfigFor } from '../helpers/kubeconfig.js';
import { file, skipWithout } from '../helpers/system-tools.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { until } from '../helpers/until.js';

/**
 * Each analyze is a node start-up and a few round trips to an API server, seconds at most; on a machine busy with
 * other suites (and other work) more, so it is killed only past runCli's default 10 s.
 */
const SLOW = { timeoutMs: 30_000 };

type Json = Record<string, unknown>;

const OLD_IMAGE = 'registry.example.com/osm-healthcheck:0.0.9';
const NEW_IMAGE = 'registry.example.com/osm-healthcheck:envtest';
const INJECTION = { 'osm-healthcheck-injection': 'enabled' };
const CONFIG = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const GOLDENS = join(import.meta.dirname, '..', '..', '..', 'shared', 'mesh-goldens');
const OSM_EDGE_POD = file(
  join(GOLDENS, 'osm-edge', 'bookstore-http.v1.3.9.injected.yaml'),
  'osm-edge-injected pods (../shared/mesh-goldens)',
);
const ISTIO_POD = file(
  join(GOLDENS, 'istio', 'hello-probes.yaml.injected'),
  'Istio-injected pods (../shared/mesh-goldens)',
);

interface Report {
  cluster: { context: string; version: string };
  current: { image: string | null; version: string; source: string };
  checks: { name: string; status: string; detail: string }[];
  counts: Record<string, number>;
  groups: {
    namespace: string;
    kind: string;
    name: string;
    class: string;
    reason?: string;
    pods: string[];
    fix?: string;
  }[];
  needsAction: boolean;
  tableless: {
    namespace: string;
    kind: string;
    name: string;
    container: string;
    allowedPorts: string | null;
    pods: string[];
  }[];
}

/** A pod the way a meshed app's is written: one container, probes the companion answers. */
function appSpec(): Json {
  return {
    containers: [
      {
        name: 'web',
        image: 'ghcr.io/example/web:1.0',
        ports: [{ name: 'http', containerPort: 8080 }],
        readinessProbe: { httpGet: { path: '/ready', port: 'http' } },
        livenessProbe: { tcpSocket: { port: 8080 } },
      },
    ],
  };
}

describe.each(ENVTEST_SERVERS.map((server) => ({ server, version: server.version })))(
  'analyze against kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(`analyze against a real kube-apiserver ${server.version}`, [
      ...envtestNeeds(server),
      ISTIO_POD,
      OSM_EDGE_POD,
    ]);
    const meshPod = server.minor >= 29;
    let env: Envtest;
    let cert: TestCert;
    let webhook: RunningWebhook | undefined;
    let dir: string;
    let kubeconfig: string;
    const uids = new Map<string, string>();

    const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
    const analyze = async (...args: string[]) => {
      const exit = await runCli(['analyze', '--kubeconfig', kubeconfig, ...args], {
        ...SLOW,
        env: { KUBECONFIG: '' },
      });
      return { ...exit, report: (args.includes('json') ? JSON.parse(exit.stdout) : undefined) as Report };
    };

    /** A Deployment, its ReplicaSet, and `count` pods of it, created through admission. */
    async function deployment(ns: string, name: string, count: number, template: Json = {}): Promise<void> {
      const labels = { app: name };
      const deploy = await env.admin.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name },
        spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: appSpec() } },
      });
      const rsName = `${name}-5d8f`;
      const rs = await env.admin.create(`/apis/apps/v1/namespaces/${ns}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: rsName, ownerReferences: [owner('apps/v1', 'Deployment', name, deploy)] },
        spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: appSpec() } },
      });
      uids.set(`${ns}/${rsName}`, String((rs.metadata as Json).uid));
      for (let i = 0; i < count; i++) await replicaPod(ns, name, `${rsName}-${i}`, template);
    }

    async function replicaPod(ns: string, app: string, podName: string, template: Json = {}): Promise<Json> {
      const rsName = podName.replace(/-\d+$/, '');
      return env.admin.create(pods(ns), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: podName,
          labels: { app },
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'ReplicaSet',
              name: rsName,
              uid: uids.get(`${ns}/${rsName}`),
              controller: true,
            },
          ],
          ...template,
        },
        spec: appSpec(),
      });
    }

    const owner = (apiVersion: string, kind: string, name: string, object: Json) => ({
      apiVersion,
      kind,
      name,
      uid: (object.metadata as Json).uid,
      controller: true,
    });

    async function bare(
      ns: string,
      name: string,
      spec: Json,
      annotations?: Record<string, string>,
    ): Promise<Json> {
      return env.admin.create(pods(ns), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, ...(annotations === undefined ? {} : { annotations }) },
        spec,
      });
    }

    /** The serving certificate the webhook published on its configuration (src/webhook/tls/published-cert.ts). */
    async function published(): Promise<unknown> {
      const config = await env.admin.get(`${CONFIG}/osm-healthcheck`);
      return ((config.metadata as Json).annotations as Json | undefined)?.[SERVING_CERT_ANNOTATION];
    }

    /** Our configuration, calling `running`, trusting `ca`, once the API server calls it and it is published. */
    async function configure(running: RunningWebhook, ca: string): Promise<void> {
      await env.admin.request('DELETE', `${CONFIG}/osm-healthcheck`);
      await registerWebhook(env.admin, 'osm-healthcheck', running.url, ca, 'enabled');
      await until(
        'the webhook publishes its certificate',
        async () => (await published()) === cert.cert,
        () => running.output(),
      );
      await until(
        'the API server calls the webhook',
        async () => {
          const tried = await env.admin.dryRunPod('shop', {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { generateName: 'probe-' },
            spec: appSpec(),
          });
          return tried.admitted && JSON.stringify(tried.object).includes('"osm-healthcheck"');
        },
        () => running.output(),
      );
    }

    /** The webhook's Deployment as deploy/webhook writes it (with cert-manager's files). */
    async function webhookDeployment(image: string, args: string[] = []): Promise<void> {
      const ns = WEBHOOK_NAMESPACE;
      await env.admin.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/osm-healthcheck-webhook`);
      const created = await env.admin.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'osm-healthcheck-webhook' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { 'app.kubernetes.io/name': 'osm-healthcheck-webhook' } },
          template: {
            metadata: { labels: { 'app.kubernetes.io/name': 'osm-healthcheck-webhook' } },
            spec: {
              containers: [
                {
                  name: 'webhook',
                  image,
                  args: ['webhook', '--tls-cert', '/tls/tls.crt', '--tls-key', '/tls/tls.key', ...args],
                  env: [{ name: 'OSM_HEALTHCHECK_IMAGE', value: image }],
                  volumeMounts: [{ name: 'tls', mountPath: '/tls', readOnly: true }],
                },
              ],
              volumes: [{ name: 'tls', secret: { secretName: 'osm-healthcheck-webhook-cert' } }],
            },
          },
        },
      });
      await env.admin.put(`/apis/apps/v1/namespaces/${ns}/deployments/osm-healthcheck-webhook/status`, {
        ...created,
        status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
      });
    }

    beforeAll(async () => {
      if (skip) return;
      dir = mkdtempSync(join(tmpdir(), 'osm-hc-analyze-'));
      env = await startEnvtest([WEBHOOK_USER], server);
      kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        kubeconfigFor(env.url, readFileSync(env.tokenFile('admin'), 'utf8'), env.caFile),
      );
      cert = makeTestCert();
      await applyRbac(env.admin);
      await makeNamespace(env.admin, 'shop', INJECTION, []);
      await makeNamespace(env.admin, 'plain', {}, []);

      // An older release's webhook: its pods carry its image.
      // --tls-resync 1: the certificate is published again within a second of the configuration's re-creation.
      const old = await startWebhook(env, cert, [`--image=${OLD_IMAGE}`, '--tls-resync=1']);
      await configure(old, cert.cert);
      await deployment('shop', 'legacy', 2);
      // The webhook goes away; the API server goes on without it (failurePolicy: Ignore).
      await old.stop();
      await deployment('shop', 'web', 2);
      await bare('shop', 'debug', appSpec());
      // Today's webhook.
      webhook = await startWebhook(env, cert, [`--image=${NEW_IMAGE}`, '--tls-resync=1']);
      await configure(webhook, cert.cert);
      await webhookDeployment(NEW_IMAGE);
      await deployment('shop', 'current', 2);
      // A companion kubelet restarted, the last time for its memory: what kubelet writes to the pod's status.
      await deployment('shop', 'flaky', 1);
      const flaky = await env.admin.get(`${pods('shop')}/flaky-5d8f-0`);
      const spec = flaky.spec as { initContainers?: { name: string }[]; containers: { name: string }[] };
      const status = (name: string) => ({
        name,
        ready: name !== 'osm-healthcheck',
        restartCount: name === 'osm-healthcheck' ? 3 : 0,
        image: 'x',
        imageID: '',
        state: { running: { startedAt: '2026-11-28T08:00:00Z' } },
        ...(name === 'osm-healthcheck'
          ? {
              lastState: {
                terminated: {
                  exitCode: 137,
                  reason: 'OOMKilled',
                  startedAt: '2026-11-28T07:59:00Z',
                  finishedAt: '2026-11-28T08:00:00Z',
                },
              },
            }
          : {}),
      });
      await env.admin.put(`${pods('shop')}/flaky-5d8f-0/status`, {
        ...flaky,
        status: {
          phase: 'Running',
          initContainerStatuses: (spec.initContainers ?? []).map((c) => status(c.name)),
          containerStatuses: spec.containers.map((c) => status(c.name)),
        },
      });
      await bare('shop', 'kept-out', appSpec(), { 'osm-healthcheck/rewrite-probes': 'false' });
      await bare('shop', 'on-the-node', { ...appSpec(), hostNetwork: true });
      await bare('shop', 'no-probes', { containers: [{ name: 'job', image: 'busybox' }] });
      // Istio's pod as its injector writes it: its pilot-agent has the probes. Istio's proxy is a native sidecar,
      // which the API server refuses before 1.29 (1.28 with the gate): there no such pod exists.
      if (meshPod) {
        const [istio] = parseAllDocuments(readFileSync(ISTIO_POD.what, 'utf8')).map((d) => d.toJS() as Json);
        const template = ((istio as Json).spec as Json).template as Json;
        const annotations = (template.metadata as Json).annotations as Record<string, string>;
        await bare(
          'shop',
          'istio-hello',
          { ...(template.spec as Json), serviceAccountName: 'default' },
          annotations,
        );
      }
      // Outside the labelled namespaces nothing is news, unless it carries our companion.
      await bare('plain', 'elsewhere', appSpec());
      // osm-edge's pod whose healthcheck container runs our image (getHealthcheckContainerSpec): no probe table.
      const osmEdge = parseAllDocuments(readFileSync(OSM_EDGE_POD.what, 'utf8'))[0]?.toJS() as Json;
      const osmSpec: Json = { ...(osmEdge.spec as Json), serviceAccountName: 'default' };
      (osmSpec.containers as Json[]).push({
        name: 'osm-healthcheck',
        image: OLD_IMAGE,
        command: ['/osm-healthcheck'],
        args: ['--verbosity', 'info'],
        ports: [{ containerPort: 15904 }],
      });
      await bare('plain', 'bookstore', osmSpec);
    }, 240_000);

    afterAll(async () => {
      await webhook?.stop();
      cert?.cleanup();
      await env?.stop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    describe.skipIf(skip)('a cluster after an outage and an upgrade', () => {
      it('names every stale and uncovered pod with the command that fixes it, and exits 1', async () => {
        const { code, report, stderr } = await analyze('-A', '-o', 'json');
        expect(code, stderr).toBe(1);
        expect(stderr).toMatch(/\[OSM_HC_ANALYZE\]$/m);
        const byName = new Map(report.groups.map((g) => [`${g.kind}/${g.name}`, g]));
        expect(byName.get('Deployment/legacy')).toMatchObject({
          namespace: 'shop',
          class: 'stale',
          pods: ['legacy-5d8f-0', 'legacy-5d8f-1'],
          fix: 'kubectl -n shop rollout restart deployment/legacy',
        });
        expect(byName.get('Deployment/web')).toMatchObject({
          class: 'uncovered',
          pods: ['web-5d8f-0', 'web-5d8f-1'],
          fix: 'kubectl -n shop rollout restart deployment/web',
        });
        expect(byName.get('Pod/debug')).toMatchObject({
          class: 'uncovered',
          fix: 'kubectl -n shop get pod debug -o yaml | kubectl replace --force -f -',
        });
        expect(byName.get('Deployment/current')).toMatchObject({
          class: 'covered',
          pods: ['current-5d8f-0', 'current-5d8f-1'],
        });
        expect(byName.get('Deployment/flaky')).toMatchObject({
          class: 'failing',
          detail: 'the companion restarted 3 times, last ended OOMKilled',
          fix: 'kubectl -n shop logs flaky-5d8f-0 -c osm-healthcheck --previous; kubectl -n shop describe pod flaky-5d8f-0',
        });
        expect(byName.get('Pod/kept-out')).toMatchObject({ class: 'untouched', reason: 'opted-out' });
        expect(byName.get('Pod/on-the-node')).toMatchObject({ class: 'untouched', reason: 'host-network' });
        expect(byName.get('Pod/no-probes')).toMatchObject({ class: 'untouched', reason: 'no-probe' });
        if (meshPod)
          expect(byName.get('Pod/istio-hello')).toMatchObject({ class: 'untouched', reason: 'mesh-probed' });
        expect(byName.has('Pod/elsewhere')).toBe(false);
        expect(byName.has('Pod/bookstore')).toBe(false);
        // osm-edge's healthcheck container on our image (an older tag): listed, not counted, not needing action.
        expect(report.tableless).toEqual([
          {
            namespace: 'plain',
            kind: 'Pod',
            name: 'bookstore',
            container: 'osm-healthcheck',
            allowedPorts: null,
            pods: ['bookstore'],
          },
        ]);
        expect(report.counts).toEqual({
          covered: 2,
          stale: 2,
          uncovered: 3,
          untouched: meshPod ? 4 : 3,
          failing: 1,
        });
        // The install as deployed, and the live webhook's decision through the real API server.
        const checks = Object.fromEntries(report.checks.map((c) => [c.name, c]));
        expect(checks['webhook-configuration']?.status).toBe('ok');
        expect(checks['webhook-deployment']).toMatchObject({ status: 'ok' });
        expect(checks['webhook-deployment']?.detail).toContain(NEW_IMAGE);
        expect(checks['ca-bundle']).toMatchObject({ status: 'ok' });
        // Called by URL here, not through a Service: no name to check the certificate for.
        expect(checks['ca-bundle']?.detail).toBe(
          `the caBundle signed the serving certificate in the annotation ${SERVING_CERT_ANNOTATION} of osm-healthcheck`,
        );
        // The test certificate lives two days: within a week of its end the check warns, saying when.
        const validTo = new Date(new X509Certificate(cert.cert).validTo).toISOString().slice(0, 10);
        expect(checks['certificate-expiry']).toEqual({
          section: 'install',
          name: 'certificate-expiry',
          status: 'warn',
          detail: `the serving certificate expires on ${validTo}, in 1 day`,
        });
        expect(checks['dry-run']?.status).toBe('ok');
        expect(checks['dry-run']?.detail).toContain(`image ${NEW_IMAGE}`);
        expect(report.current).toMatchObject({
          image: NEW_IMAGE,
          source: 'the dry run: what the live webhook wrote',
        });
      });

      it('prints the same as a table a person reads, the fixes last', async () => {
        const { code, stdout } = await analyze('-A');
        expect(code).toBe(1);
        expect(stdout).toMatch(/^shop +Deployment\/web +2 +uncovered +no companion/m);
        expect(stdout).toMatch(
          /^shop +Deployment\/legacy +2 +stale +companion image registry\.example\.com\/osm-healthcheck:0\.0\.9/m,
        );
        expect(stdout).not.toMatch(/^shop +Deployment\/current/m);
        const fixes = stdout.slice(stdout.indexOf('TO FIX'));
        expect(fixes).toContain('kubectl -n shop rollout restart deployment/legacy');
        expect(fixes).toContain('kubectl -n shop rollout restart deployment/web');
        expect(stdout).toMatch(/^plain +Pod\/bookstore +1 +osm-healthcheck +any port, any path$/m);
        expect(stdout.trimEnd().split('\n').at(-1)).toBe('Needs action: 6 pods to restart or look at.');
      });

      it('-n narrows to one namespace; the context namespace is the default', async () => {
        const { report } = await analyze('-n', 'plain', '-o', 'json');
        expect(report.groups).toEqual([]);
        const inShop = join(dir, 'kubeconfig-shop');
        writeFileSync(
          inShop,
          kubeconfigFor(env.url, readFileSync(env.tokenFile('admin'), 'utf8'), env.caFile, 'shop'),
        );
        const exit = await runCli(['analyze', '--kubeconfig', inShop, '-o', 'json', '--no-dry-run'], SLOW);
        expect((JSON.parse(exit.stdout) as Report).counts.uncovered).toBe(3);
      });

      it('exits 0 once the stale and uncovered pods are restarted', async () => {
        for (const name of ['legacy-5d8f-0', 'legacy-5d8f-1', 'web-5d8f-0', 'web-5d8f-1', 'debug']) {
          await env.admin.request('DELETE', `${pods('shop')}/${name}?gracePeriodSeconds=0`);
        }
        // No kubelet runs: a deleted pod is gone at once. A controller's new pods go through admission.
        for (const name of ['legacy-5d8f-0', 'legacy-5d8f-1', 'web-5d8f-0', 'web-5d8f-1']) {
          await replicaPod('shop', name.split('-')[0] as string, name);
        }
        await bare('shop', 'debug', appSpec());
        // The companion that kept restarting, looked at and let be: its pod goes and a new one comes.
        await env.admin.request('DELETE', `${pods('shop')}/flaky-5d8f-0?gracePeriodSeconds=0`);
        await replicaPod('shop', 'flaky', 'flaky-5d8f-0');
        const { code, report, stderr } = await analyze('-A', '-o', 'json');
        expect(code, `${stderr}\n${JSON.stringify(report.groups, null, 1)}`).toBe(0);
        expect(report.counts).toMatchObject({ covered: 8, stale: 0, uncovered: 0, failing: 0 });
        expect(report.needsAction).toBe(false);
      });

      it('an exec credential plugin and KUBECONFIG of several files, as kubectl reads them', async () => {
        const plugin = join(dir, 'credential.mjs');
        const token = readFileSync(env.tokenFile('admin'), 'utf8').trim();
        writeFileSync(
          plugin,
          `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(token)} } }));\n`,
        );
        const withPlugin = kubeconfigFor(
          env.url,
          { exec: { command: process.execPath, args: [plugin] } },
          env.caFile,
        );
        // The cluster and user in one file, the context choice in another: KUBECONFIG merges them.
        const first = join(dir, 'kubeconfig-exec');
        writeFileSync(first, withPlugin.replace(/^current-context: .*$/m, ''));
        const second = join(dir, 'kubeconfig-context');
        writeFileSync(second, 'apiVersion: v1\nkind: Config\ncurrent-context: test\n');
        const exit = await runCli(['analyze', '-A', '-o', 'json', '--no-dry-run'], {
          ...SLOW,
          env: { KUBECONFIG: `${first}:${second}` },
        });
        expect(exit.code, exit.stderr).toBe(0);
        expect((JSON.parse(exit.stdout) as Report).cluster.context).toBe('test');
        // A wrong token is the cluster's refusal, exit 3, one line.
        writeFileSync(join(dir, 'kubeconfig-bad'), kubeconfigFor(env.url, 'not-a-token', env.caFile));
        const refused = await runCli(['analyze', '--kubeconfig', join(dir, 'kubeconfig-bad'), '-A'], SLOW);
        expect(refused.code).toBe(3);
        expect(refused.stderr.trim().split('\n')).toHaveLength(1);
        expect(refused.stderr).toMatch(/refused GET \/version: Unauthorized \(HTTP 401\) \[OSM_HC_CLUSTER\]/);
      }, 60_000);

      it('a webhook that sets --companion-cpu-limit 0.5: analyze expects the 500m it stores, and exits 0', async () => {
        // The webhook's flag as the chart writes it, on the running webhook and in its Deployment alike.
        const limit = ['--companion-cpu-limit', '0.5'];
        await webhook?.stop();
        webhook = await startWebhook(env, cert, [`--image=${NEW_IMAGE}`, '--tls-resync=1', ...limit]);
        await configure(webhook, cert.cert);
        await webhookDeployment(NEW_IMAGE, limit);
        await makeNamespace(env.admin, 'limited', INJECTION, []);
        await deployment('limited', 'app', 2);
        const created = await env.admin.get(`${pods('limited')}/app-5d8f-0`);
        expect(JSON.stringify(created.spec)).toContain('"cpu":"500m"');
        const { code, report, stderr } = await analyze('-n', 'limited', '-o', 'json');
        expect(code, `${stderr}\n${JSON.stringify(report.checks, null, 1)}`).toBe(0);
        expect(report.counts).toMatchObject({ covered: 2, stale: 0, uncovered: 0 });
        const checks = Object.fromEntries(report.checks.map((c) => [c.name, c]));
        expect(checks['dry-run']?.status).toBe('ok');
        expect(checks['webhook-deployment']?.status).toBe('ok');
      });

      it("a caBundle that did not sign the webhook's certificate: the check and the dry run both fail", async () => {
        const other = makeTestCert('other');
        try {
          await env.admin.request('DELETE', `${CONFIG}/osm-healthcheck`);
          await registerWebhook(env.admin, 'osm-healthcheck', webhook?.url ?? '', other.cert, 'enabled');
          await until('the API server no longer trusts the webhook', async () => {
            const tried = await env.admin.dryRunPod('shop', {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { generateName: 'probe-' },
              spec: appSpec(),
            });
            return tried.admitted && !JSON.stringify(tried.object).includes('"osm-healthcheck"');
          });
          // The new configuration has no annotation until the webhook's next resync puts it back.
          await until(
            'the webhook publishes its certificate again',
            async () => (await published()) === cert.cert,
          );
          const { code, report } = await analyze('-A', '-o', 'json');
          expect(code).toBe(1);
          const checks = Object.fromEntries(report.checks.map((c) => [c.name, c]));
          expect(checks['ca-bundle']).toMatchObject({ status: 'fail' });
          expect(checks['ca-bundle']?.detail).toMatch(
            /did not sign the serving certificate in the annotation osm-healthcheck\.flomesh\.io\/serving-certificate of osm-healthcheck/,
          );
          expect(checks['dry-run']).toMatchObject({ status: 'fail' });
          expect(checks['dry-run']?.detail).toMatch(/without a word from the webhook/);
        } finally {
          other.cleanup();
        }
      });
    });
  },
);
