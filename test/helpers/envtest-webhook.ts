// `osm-healthcheck webhook` (the built CLI) behind an envtest API server, installed as deploy/webhook installs it:
// its RBAC objects applied as they are (the ServiceAccount's user has a token of its own, so RBAC's
// ServiceAccount subjects match it), and its MutatingWebhookConfiguration with clientConfig pointed at the process.

import { readFileSync } from 'node:fs';
import { get } from 'node:https';
import { parseAllDocuments } from 'yaml';
import { startCli } from './cli.js';
import type { Envtest, EnvtestUser } from './envtest.js';
import type { KubeClient } from './envtest-client.js';
import { makeNamespace } from './envtest-namespace.js';
import { ended } from './loopback-process.js';
import type { TestCert } from './tls.js';
import { until } from './until.js';

type Json = Record<string, unknown>;

export const WEBHOOK_NAMESPACE = 'osm-healthcheck';
const ACCOUNT = `system:serviceaccount:${WEBHOOK_NAMESPACE}:osm-healthcheck-webhook`;
/** The webhook's ServiceAccount as the token file names it. */
export const WEBHOOK_USER: EnvtestUser = {
  name: ACCOUNT,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${WEBHOOK_NAMESPACE}`],
};
const DEPLOY = new URL('../../deploy/webhook/', import.meta.url);
const RBAC = 'rbac.authorization.k8s.io/v1';
const PATHS: Record<string, string> = {
  ServiceAccount: `/api/v1/namespaces/${WEBHOOK_NAMESPACE}/serviceaccounts`,
  Role: `/apis/${RBAC}/namespaces/${WEBHOOK_NAMESPACE}/roles`,
  RoleBinding: `/apis/${RBAC}/namespaces/${WEBHOOK_NAMESPACE}/rolebindings`,
  ClusterRole: `/apis/${RBAC}/clusterroles`,
  ClusterRoleBinding: `/apis/${RBAC}/clusterrolebindings`,
};

function manifests(file: string): Json[] {
  return parseAllDocuments(readFileSync(new URL(file, DEPLOY), 'utf8')).map((d) => d.toJS() as Json);
}

/** The webhook's namespace, then deploy/webhook/rbac.yaml in it, object by object. */
export async function applyRbac(client: KubeClient): Promise<void> {
  await makeNamespace(client, WEBHOOK_NAMESPACE, {}, []);
  for (const object of manifests('rbac.yaml')) {
    const path = PATHS[String(object.kind)];
    if (path === undefined) throw new Error(`rbac.yaml: no path for kind ${String(object.kind)}`);
    await client.create(path, object);
  }
}

/**
 * deploy/webhook/mutating-webhook.yaml as `name`, calling `url` (trusting `ca`) rather than the Service, for the
 * namespaces labelled `osm-healthcheck-injection: <injection>`.
 */
export async function registerWebhook(
  client: KubeClient,
  name: string,
  url: string,
  ca: string,
  injection: string,
): Promise<void> {
  const [config] = manifests('mutating-webhook.yaml');
  const webhooks = ((config as Json).webhooks as Json[]).map((hook) => ({
    ...hook,
    clientConfig: { url, caBundle: Buffer.from(ca).toString('base64') },
    namespaceSelector: { matchLabels: { 'osm-healthcheck-injection': injection } },
  }));
  await client.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
    ...config,
    metadata: { ...((config as Json).metadata as Json), name },
    webhooks,
  });
}

export interface RunningWebhook {
  url: string;
  /** Its plain-HTTP /metrics port (--metrics-port; vitest.config.ts makes it ephemeral). */
  metricsPort: number;
  output: () => string;
  /** GET /readyz: 200 once every collection it keeps was listed. */
  readyz(): Promise<number>;
  stop(): Promise<void>;
}

/** The webhook on a free loopback port, serving `cert`, as WEBHOOK_USER against `env`: once it is ready. */
export async function startWebhook(
  env: Envtest,
  cert: TestCert,
  args: string[] = [],
): Promise<RunningWebhook> {
  const { child, line, output } = await startCli(
    [
      'webhook',
      '--port=0',
      '--host=127.0.0.1',
      `--tls-cert=${cert.certFile}`,
      `--tls-key=${cert.keyFile}`,
      `--kube-api=${env.url}`,
      `--kube-ca=${env.caFile}`,
      `--kube-token-file=${env.tokenFile(ACCOUNT)}`,
      '--image=registry.example.com/osm-healthcheck:envtest',
      ...args,
    ],
    { KUBERNETES_SERVICE_HOST: '' },
    (l) => l.msg === 'webhook serving',
  );
  const base = `https://127.0.0.1:${String(line.port)}`;
  const webhook = {
    url: `${base}/mutate`,
    metricsPort: Number(line.metricsPort),
    output,
    readyz: () => status(`${base}/readyz`, cert.cert),
    stop: () => ended(child),
  };
  try {
    await until('webhook ready', async () => (await webhook.readyz()) === 200, output);
  } catch (err) {
    await webhook.stop();
    throw err;
  }
  return webhook;
}

function status(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { ca, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}
