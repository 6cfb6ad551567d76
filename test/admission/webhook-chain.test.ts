// The whole chain against a real kube-apiserver: `osm-healthcheck webhook` (the built CLI) learns the cluster
// through that API server as the ServiceAccount of deploy/webhook/rbac.yaml (its objects applied as they are, so a
// verb the code needs and the manifest lacks shows up here), and the API server calls it through
// deploy/webhook/mutating-webhook.yaml's configuration (clientConfig pointed at it). Dry-run creates of pods come
// back patched and admitted, or untouched with our warning among the response's warnings.

import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startCli } from '../helpers/cli.js';
import { ENVTEST_NEEDS, type Envtest, startEnvtest } from '../helpers/envtest.js';
import { makeNamespace, ourContainers, type Pod, untilRefused } from '../helpers/envtest-namespace.js';
import { skipWithout } from '../helpers/system-tools.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { appPod, RULE_CASES, RULE_PROBE } from './rule-cases.js';

type Json = Record<string, unknown>;

const skip = skipWithout('the webhook behind a real kube-apiserver', ENVTEST_NEEDS);

const WEBHOOK_NS = 'osm-healthcheck';
const SERVICE_ACCOUNT = `system:serviceaccount:${WEBHOOK_NS}:osm-healthcheck-webhook`;
const INJECTION = { 'osm-healthcheck-injection': 'enabled' };
// The configuration's objectSelector leaves the webhook's own pods alone: a pod with this label is created as
// the cluster creates it without us.
const NOT_SENT = { 'app.kubernetes.io/name': 'osm-healthcheck-webhook' };
const DEPLOY = new URL('../../deploy/webhook/', import.meta.url);

let env: Envtest;
let cert: TestCert;
let webhook: { child: ChildProcess; line: Json; output: () => string } | undefined;

const RBAC_PATHS: Record<string, string> = {
  ServiceAccount: `/api/v1/namespaces/${WEBHOOK_NS}/serviceaccounts`,
  Role: `/apis/rbac.authorization.k8s.io/v1/namespaces/${WEBHOOK_NS}/roles`,
  RoleBinding: `/apis/rbac.authorization.k8s.io/v1/namespaces/${WEBHOOK_NS}/rolebindings`,
  ClusterRole: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
};

function manifests(file: string): Json[] {
  return parseAllDocuments(readFileSync(new URL(file, DEPLOY), 'utf8')).map((d) => d.toJS() as Json);
}

/** deploy/webhook's configuration, calling the webhook at `url` rather than through its Service. */
function configuration(url: string): Json {
  const [config] = manifests('mutating-webhook.yaml');
  const webhooks = ((config as Json).webhooks as Json[]).map((hook) => ({
    ...hook,
    clientConfig: { url, caBundle: Buffer.from(cert.cert).toString('base64') },
  }));
  return { ...config, webhooks };
}

const namespaceOf = (index: number) => `chain-${index}`;

beforeAll(async () => {
  if (skip) return;
  env = await startEnvtest([
    { name: SERVICE_ACCOUNT, groups: ['system:serviceaccounts', `system:serviceaccounts:${WEBHOOK_NS}`] },
  ]);
  cert = makeTestCert();
  await makeNamespace(env.admin, WEBHOOK_NS, {}, []);
  for (const object of manifests('rbac.yaml')) {
    const path = RBAC_PATHS[String(object.kind)];
    if (path === undefined) throw new Error(`rbac.yaml: no path for kind ${String(object.kind)}`);
    await env.admin.create(path, object);
  }
  await makeNamespace(env.admin, 'shop', INJECTION, []);
  for (const [index, c] of RULE_CASES.entries()) {
    await makeNamespace(
      env.admin,
      namespaceOf(index),
      { ...INJECTION, ...c.labels },
      c.rules(namespaceOf(index)),
    );
    if (c.settles) await untilRefused(env.admin, namespaceOf(index), RULE_PROBE);
  }
  webhook = await startCli(
    [
      'webhook',
      '--port=0',
      '--host=127.0.0.1',
      `--tls-cert=${cert.certFile}`,
      `--tls-key=${cert.keyFile}`,
      `--kube-api=${env.url}`,
      `--kube-ca=${env.caFile}`,
      `--kube-token-file=${env.tokenFile(SERVICE_ACCOUNT)}`,
      '--image=registry.example.com/osm-healthcheck:envtest',
    ],
    { KUBERNETES_SERVICE_HOST: '' },
    (line) => line.msg === 'webhook serving',
  );
  const port = webhook.line.port as number;
  await until('the webhook lists namespaces', async () => webhook?.output().includes('"namespaces listed"'));
  await env.admin.create(
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    configuration(`https://127.0.0.1:${port}/mutate`),
  );
  // The API server picks a new configuration up from its informer a moment later.
  await until('the API server calls the webhook', async () =>
    ourContainers(await created('shop', appPod())).includes('osm-healthcheck'),
  );
}, 120_000);

async function until(what: string, done: () => Promise<boolean | undefined>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await done())) {
    if (Date.now() > deadline)
      throw new Error(`${what}: not within 20 s; webhook output:\n${webhook?.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

afterAll(async () => {
  webhook?.child.kill('SIGTERM');
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
  metadata: { ...pod.metadata, labels: { ...(pod.metadata.labels as Record<string, string>), ...labels } },
});

describe.skipIf(skip)('the API server calls the webhook', () => {
  it('patches a pod: the companion and the init container, admitted', async () => {
    const pod = await created('shop', appPod());
    expect(ourContainers(pod)).toEqual(['osm-healthcheck-init', 'osm-healthcheck']);
    expect(pod.metadata.annotations).toMatchObject({ 'kubectl.kubernetes.io/default-container': 'web' });
  });

  it('says nothing it was not asked (no RBAC refusal in its log)', () => {
    expect(webhook?.output()).not.toMatch(/forbidden/i);
  });

  it.each(RULE_CASES.map((c, index) => ({ ...c, namespace: namespaceOf(index) })))(
    '$name',
    async ({ namespace, pod, expected, names }) => {
      const original = pod ?? appPod();
      const before = await env.admin.dryRunPod(namespace, labelled(original, NOT_SENT));
      expect(before.admitted ? 'admitted' : before.message, 'without the webhook (precondition)').toBe(
        'admitted',
      );

      const after = await env.admin.dryRunPod(namespace, original);
      expect(after.admitted ? 'admitted' : after.message, 'with the webhook').toBe('admitted');
      if (!after.admitted) return;
      const ours = ourContainers(after.object as Pod);
      const ourWarnings = after.warnings.filter((w) => w.startsWith('osm-healthcheck: ')).join('\n');
      if (expected === 'companion') expect(ours, ourWarnings).toContain('osm-healthcheck');
      if (expected === 'untouched' || expected === 'annotation') expect(ours).toEqual([]);
      if (ours.length === 0) expect(ourWarnings, 'a warning naming the rule').toMatch(names);
    },
  );
});

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
    const template = (result.admitted ? (result.object.spec as Json).template : {}) as { spec: Pod['spec'] };
    expect(ourContainers(template)).toEqual([]);
  });

  it("a Deployment whose pods a namespace's quota leaves no room for us: said at apply, not when pods fail", async () => {
    const index = RULE_CASES.findIndex((c) => c.name === "ResourceQuota with room for the app's 100m only");
    const result = await env.admin.dryRun(deployments(namespaceOf(index)), deployment(appPod()));
    expect(result.admitted ? result.warnings.join('\n') : result.message).toMatch(
      /^osm-healthcheck: Deployment\/web: .*"adm"/m,
    );
  });
});
