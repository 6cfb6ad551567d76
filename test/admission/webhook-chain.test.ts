// The whole chain against each real kube-apiserver the project is checked on (1.26, 1.32, 1.36): `osm-healthcheck webhook` (the built CLI) learns the cluster
// through that API server as the ServiceAccount of deploy/webhook/rbac.yaml (so a verb the code needs and the
// manifest lacks shows up here), and the API server calls it through deploy/webhook/mutating-webhook.yaml's
// configuration (test/helpers/envtest-webhook.ts). Dry-run creates of pods come
// back patched and admitted, or untouched with our warning among the response's warnings.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVTEST_SERVERS, type Envtest, envtestNeeds, startEnvtest } from '../helpers/envtest.js';
import {
  companionPlacement,
  makeNamespace,
  ourContainers,
  type Pod,
  untilRefused,
} from '../helpers/envtest-namespace.js';
import {
  applyRbac,
  type RunningWebhook,
  registerWebhook,
  startWebhook,
  WEBHOOK_NAMESPACE,
  WEBHOOK_USER,
} from '../helpers/envtest-webhook.js';
import { skipWithout } from '../helpers/system-tools.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { until } from '../helpers/until.js';
import { appPod, RULE_CASES, RULE_PROBE, type RuleCase, vapRules } from './rule-cases.js';

type Json = Record<string, unknown>;

const INJECTION = { 'osm-healthcheck-injection': 'enabled' };
// The configuration's objectSelector leaves the webhook's own pods alone: a pod with this label is created as
// the cluster creates it without us.
const NOT_SENT = { 'app.kubernetes.io/name': 'osm-healthcheck-webhook' };

const nativeOf = (index: number) => `native-${index}`;

describe.each(ENVTEST_SERVERS.map((server) => ({ server, version: server.version })))(
  'kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(
      `the webhook behind a real kube-apiserver ${server.version}`,
      envtestNeeds(server),
    );

    let env: Envtest;
    let cert: TestCert;
    const webhooks: RunningWebhook[] = [];

    const namespaceOf = (index: number) => `chain-${index}`;
    const webhookOutput = () => `webhook output:\n${webhooks.map((w) => w.output()).join('\n')}`;

    /** A webhook process and its configuration for namespaces labelled `injection`, once the API server calls it. */
    async function installed(name: string, injection: string, probeNamespace: string, args: string[] = []) {
      const webhook = await startWebhook(env, cert, args);
      webhooks.push(webhook);
      await registerWebhook(env.admin, name, webhook.url, cert.cert, injection);
      // The API server picks a new configuration up from its informer a moment later.
      await until(
        `the API server calls webhook ${name}`,
        async () => ourContainers(await created(probeNamespace, appPod())).includes('osm-healthcheck'),
        webhookOutput,
      );
      return webhook;
    }

    let webhook: RunningWebhook;

    beforeAll(async () => {
      if (skip) return;
      env = await startEnvtest([WEBHOOK_USER], server);
      cert = makeTestCert();
      await applyRbac(env.admin);
      await makeNamespace(env.admin, 'shop', INJECTION, []);
      for (const [index, c] of RULE_CASES.entries()) {
        const namespace = namespaceOf(index);
        await makeNamespace(env.admin, namespace, { ...INJECTION, ...c.labels }, c.rules(namespace));
        if (c.settles) await untilRefused(env.admin, namespace, RULE_PROBE);
      }
      // The table's rows with the companion first on every version (a node comes next, for placement auto).
      webhook = await installed('osm-healthcheck', 'enabled', 'shop', ['--placement=first']);

      // Placement auto, a node whose kubelet is the API server's version.
      await env.admin.create('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'node-1' },
        status: { nodeInfo: { kubeletVersion: server.version } },
      });
      const native = { 'osm-healthcheck-injection': 'native' };
      await makeNamespace(env.admin, 'native-probe', native, []);
      for (const [index, c] of RULE_CASES.entries()) {
        await makeNamespace(env.admin, nativeOf(index), { ...native, ...c.labels }, c.rules(nativeOf(index)));
        if (c.settles) await untilRefused(env.admin, nativeOf(index), RULE_PROBE);
      }
      await installed('osm-healthcheck-native', 'native', 'native-probe');

      // admissionregistration.k8s.io/v1's ValidatingAdmissionPolicy is served from 1.30.
      if (server.minor >= 30) {
        const cpuLimit = { 'osm-healthcheck-injection': 'cpu-limit' };
        await makeNamespace(env.admin, 'vap-probe', cpuLimit, []);
        await makeNamespace(env.admin, 'vap', cpuLimit, vapRules('vap'));
        await untilRefused(env.admin, 'vap', RULE_PROBE);
        await installed('osm-healthcheck-cpu-limit', 'cpu-limit', 'vap-probe', [
          '--companion-cpu-limit=200m',
        ]);
      }
    }, 240_000);

    afterAll(async () => {
      for (const w of webhooks.splice(0)) await w.stop();
      cert?.cleanup();
      await env?.stop();
    });

    async function created(namespace: string, pod: Pod): Promise<Pod & { warnings: string[] }> {
      const result = await env.admin.dryRunPod(namespace, pod);
      if (!result.admitted) throw new Error(`refused: ${result.message}`);
      return { ...(result.object as Pod), warnings: result.warnings };
    }

    const labelled = (pod: Pod, labels: Record<string, string>): Pod => ({
      ...pod,
      metadata: {
        ...pod.metadata,
        labels: { ...(pod.metadata.labels as Record<string, string>), ...labels },
      },
    });

    describe.skipIf(skip)('the API server calls the webhook', () => {
      it('patches a pod: the companion and the init container, admitted', async () => {
        const pod = await created('shop', appPod());
        expect(ourContainers(pod)).toEqual(['osm-healthcheck-init', 'osm-healthcheck']);
        expect(pod.metadata.annotations).toMatchObject({ 'kubectl.kubernetes.io/default-container': 'web' });
      });

      it('lists all it keeps under deploy/webhook/rbac.yaml: ready, no refusal in its log', async () => {
        expect(await webhook.readyz()).toBe(200);
        expect(webhook.output()).not.toMatch(/forbidden|answered 403/i);
      });

      it.each([
        { path: '/api/v1/namespaces', status: 200 },
        { path: '/api/v1/limitranges', status: 200 },
        { path: '/api/v1/resourcequotas', status: 200 },
        { path: '/api/v1/nodes', status: 200 },
        { path: '/api/v1/pods', status: 403 },
        { path: '/api/v1/secrets', status: 403 },
        { path: `/api/v1/namespaces/${WEBHOOK_NAMESPACE}/secrets`, status: 403 },
        { path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', status: 403 },
      ])('its ServiceAccount may GET $path: $status', async ({ path, status }) => {
        expect((await env.as(WEBHOOK_USER.name).request('GET', path)).status).toBe(status);
      });

      it.each(RULE_CASES.map((c, index) => ({ ...c, namespace: namespaceOf(index) })))('$name', async (c) => {
        await throughTheChain(c);
      });
    });

    /** A rule case through the API server and the webhook: admitted without and with it, as the case expects. */
    async function throughTheChain(c: RuleCase & { namespace: string }): Promise<Pod | undefined> {
      const original = c.pod ?? appPod();
      const before = await env.admin.dryRunPod(c.namespace, labelled(original, NOT_SENT));
      expect(before.admitted ? 'admitted' : before.message, 'without the webhook (precondition)').toBe(
        'admitted',
      );

      const after = await env.admin.dryRunPod(c.namespace, original);
      expect(after.admitted ? 'admitted' : after.message, 'with the webhook').toBe('admitted');
      if (!after.admitted) return undefined;
      const pod = after.object as Pod;
      const ours = ourContainers(pod);
      const ourWarnings = after.warnings.filter((w) => w.startsWith('osm-healthcheck: ')).join('\n');
      if (c.expected === 'companion') expect(ours, ourWarnings).toContain('osm-healthcheck');
      if (c.expected === 'untouched' || c.expected === 'annotation') expect(ours).toEqual([]);
      if (ours.length === 0) expect(ourWarnings, 'a warning naming the rule').toMatch(c.names);
      return pod;
    }

    // Placement auto gives a native sidecar where the API server and kubelets are 1.33+ (GA), else the companion first.
    describe.skipIf(skip)(
      `no flag, a ${server.version} API server and kubelet: ${server.minor >= 33 ? 'a native sidecar' : 'the companion first'} (placement auto)`,
      () => {
        it.each(RULE_CASES.map((c, index) => ({ ...c, namespace: nativeOf(index) })))('$name', async (c) => {
          const pod = await throughTheChain(c);
          if (c.expected === 'companion' && pod !== undefined) {
            expect(companionPlacement(pod)).toBe(server.minor >= 33 ? 'native-sidecar' : 'first');
            const companion = pod.spec.initContainers?.find((x) => x.name === 'osm-healthcheck');
            if (server.minor >= 33) expect(companion?.restartPolicy).toBe('Always');
          }
        });
      },
    );

    /** A Deployment of `pod`'s template, as `kubectl apply` sends it. */
    function deployment(pod: Pod): Json {
      const labels = { app: 'web' };
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels, annotations: pod.metadata.annotations }, spec: pod.spec },
        },
      };
    }

    describe.skipIf(skip)('workloads get our warnings, never a patch (kubectl apply shows them)', () => {
      const deployments = (namespace: string) => `/apis/apps/v1/namespaces/${namespace}/deployments`;

      it('an unresolvable named port', async () => {
        const pod = appPod();
        const [web] = pod.spec.containers ?? [];
        if (web !== undefined) web.livenessProbe = { httpGet: { path: '/healthz', port: 'htpp' } };
        const result = await env.admin.dryRun(deployments('shop'), deployment(pod));
        expect(result.admitted ? result.warnings : result.message).toEqual([
          expect.stringMatching(/^osm-healthcheck: Deployment\/web: .*"htpp"/),
        ]);
        const template = (result.admitted ? (result.object.spec as Json).template : {}) as {
          spec: Pod['spec'];
        };
        expect(ourContainers(template)).toEqual([]);
      });

      it("a Deployment whose pods a namespace's quota leaves no room for us: said at apply, not when pods fail", async () => {
        const index = RULE_CASES.findIndex(
          (c) => c.name === "ResourceQuota with room for the app's 100m only",
        );
        const result = await env.admin.dryRun(deployments(namespaceOf(index)), deployment(appPod()));
        expect(result.admitted ? result.warnings.join('\n') : result.message).toMatch(
          /^osm-healthcheck: Deployment\/web: .*"adm"/m,
        );
      });
    });

    describe.skipIf(skip || server.minor < 30)(
      'a policy we cannot read (1.30+), with --companion-cpu-limit',
      () => {
        it('a ValidatingAdmissionPolicy requiring cpu and memory limits admits the patched pod', async () => {
          const before = await env.admin.dryRunPod('vap', labelled(appPod(), NOT_SENT));
          expect(before.admitted ? 'admitted' : before.message, 'without the webhook (precondition)').toBe(
            'admitted',
          );
          const after = await env.admin.dryRunPod('vap', appPod());
          expect(after.admitted ? 'admitted' : after.message, 'with the webhook').toBe('admitted');
          if (after.admitted)
            expect(ourContainers(after.object as Pod)).toEqual(['osm-healthcheck-init', 'osm-healthcheck']);
        });
      },
    );
  },
);
