// The install as deployed: the MutatingWebhookConfiguration (failurePolicy, timeout, reinvocation, caBundle),
// the webhook's Deployment and the ready endpoints of its Service, and the serving certificate the webhook
// publishes on its configuration against the caBundle (who signed it, for which names, until when). Each a check;
// a missing right is a `skip` line.

import { X509Certificate } from 'node:crypto';
import { SERVING_CERT_ANNOTATION } from '../webhook/tls/published-cert.js';
import { type Check, refused } from './checks.js';
import { asList, asObject } from './json.js';
import type { ClusterClient, Json } from './kube-client.js';
import type { LabelSelector } from './label-selector.js';
import { type WebhookSettings, webhookSettings } from './webhook-settings.js';

export const INJECT_WEBHOOK = 'inject.osm-healthcheck.io';
/** The manifests' selectors (deploy/webhook/mutating-webhook.yaml), for a cluster without the configuration. */
export const DEFAULT_NAMESPACE_SELECTOR: LabelSelector = {
  matchLabels: { 'osm-healthcheck-injection': 'enabled' },
};
export const DEFAULT_OBJECT_SELECTOR: LabelSelector = {
  matchExpressions: [
    { key: 'app.kubernetes.io/name', operator: 'NotIn', values: ['osm-healthcheck-webhook'] },
  ],
};
const CERT_WARN_DAYS = 7;
const DAY_MS = 86_400_000;

export interface InstallNames {
  webhookConfig: string;
  /** The Deployment, in the namespace of the Service the configuration names. */
  deployment: string;
  /** Where the Deployment is when the configuration names a URL, not a Service. */
  namespace: string;
}

export interface Install {
  checks: Check[];
  namespaceSelector: LabelSelector | undefined;
  objectSelector: LabelSelector | undefined;
  /** The webhook's settings, from its Deployment; undefined when it could not be read. */
  settings: WebhookSettings | undefined;
  /** `NAMESPACE/NAME` of the Service it is called through, when it is. */
  service: { namespace: string; name: string } | undefined;
}

const check = (name: string, status: Check['status'], detail: string): Check => ({
  section: 'install',
  name,
  status,
  detail,
});

/** The PEM blocks of a bundle, each as an X509Certificate; unreadable blocks are left out. */
export function certificates(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.flatMap((block) => {
    try {
      return [new X509Certificate(block)];
    } catch {
      return [];
    }
  });
}

/** The configuration's own entries as read: the checks on how they are set. */
export function configurationChecks(entry: Json, name: string): Check[] {
  const checks: Check[] = [];
  const failurePolicy = entry.failurePolicy ?? 'Fail';
  const timeout = entry.timeoutSeconds ?? 10;
  const reinvocation = entry.reinvocationPolicy ?? 'Never';
  const settings = `failurePolicy ${failurePolicy}, timeoutSeconds ${timeout}, reinvocationPolicy ${reinvocation}`;
  const problems: string[] = [];
  if (failurePolicy !== 'Ignore')
    problems.push('failurePolicy Fail blocks every pod of a labelled namespace while the webhook is down');
  if (reinvocation !== 'IfNeeded')
    problems.push(
      'without reinvocationPolicy IfNeeded a mesh injector after ours is not followed by our second pass',
    );
  if (typeof timeout === 'number' && timeout < 2)
    problems.push(
      `timeoutSeconds ${timeout} leaves the webhook little time: slow admissions pass uninjected`,
    );
  checks.push(
    check(
      'webhook-configuration',
      problems.length === 0 ? 'ok' : 'warn',
      `${name} (${INJECT_WEBHOOK}): ${settings}${problems.length === 0 ? '' : `; ${problems.join('; ')}`}`,
    ),
  );
  const bundle =
    typeof asObject(entry.clientConfig).caBundle === 'string'
      ? String(asObject(entry.clientConfig).caBundle)
      : '';
  if (bundle === '') {
    checks.push(
      check(
        'ca-bundle',
        'fail',
        `${INJECT_WEBHOOK} has no caBundle: the API server cannot trust the webhook, and every pod is admitted without the companion (the webhook writes it at start; is it running?)`,
      ),
    );
  }
  return checks;
}

/** The serving certificate against the caBundle and the Service's name, and its expiry. */
export function certificateChecks(
  certPem: string,
  bundlePem: string,
  service: { namespace: string; name: string } | undefined,
  now: Date,
  source: string,
): Check[] {
  const [leaf] = certificates(certPem);
  if (leaf === undefined) return [check('ca-bundle', 'fail', `${source} holds no readable certificate`)];
  const cas = certificates(bundlePem);
  const checks: Check[] = [];
  const signer = cas.find((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
  const host = service === undefined ? undefined : `${service.name}.${service.namespace}.svc`;
  if (signer === undefined) {
    checks.push(
      check(
        'ca-bundle',
        'fail',
        `the caBundle of ${INJECT_WEBHOOK} (${cas.length} certificate${cas.length === 1 ? '' : 's'}) did not sign the serving certificate in ${source} (issuer ${leaf.issuer.replaceAll('\n', ', ')}): the API server refuses the webhook's TLS, and every pod is admitted without the companion`,
      ),
    );
  } else if (host !== undefined && leaf.checkHost(host) === undefined) {
    checks.push(
      check(
        'ca-bundle',
        'fail',
        `the serving certificate in ${source} is not for ${host}, the name the API server dials`,
      ),
    );
  } else {
    checks.push(
      check(
        'ca-bundle',
        'ok',
        `the caBundle signed the serving certificate in ${source}${host === undefined ? '' : `, which is for ${host}`}`,
      ),
    );
  }
  const left = new Date(leaf.validTo).getTime() - now.getTime();
  const until = new Date(leaf.validTo).toISOString().slice(0, 10);
  const days = Math.floor(left / DAY_MS);
  checks.push(
    left <= 0
      ? check('certificate-expiry', 'fail', `the serving certificate expired on ${until}`)
      : days < CERT_WARN_DAYS
        ? check(
            'certificate-expiry',
            'warn',
            `the serving certificate expires on ${until}, in ${days} day${days === 1 ? '' : 's'}`,
          )
        : check('certificate-expiry', 'ok', `the serving certificate is valid until ${until} (${days} days)`),
  );
  return checks;
}

/**
 * The serving certificate the webhook publishes on its configuration (src/webhook/tls/published-cert.ts: the
 * public chain, no key), against the caBundle: analyze reads no Secret (docs/security.md).
 */
export function publishedCertChecks(
  config: Json,
  bundlePem: string,
  service: { namespace: string; name: string } | undefined,
  now: Date,
  name: string,
): Check[] {
  const published = asObject(asObject(config.metadata).annotations)[SERVING_CERT_ANNOTATION];
  if (typeof published === 'string')
    return certificateChecks(
      published,
      bundlePem,
      service,
      now,
      `the annotation ${SERVING_CERT_ANNOTATION} of ${name}`,
    );
  return [
    check(
      'ca-bundle',
      'warn',
      `MutatingWebhookConfiguration ${name} has no annotation ${SERVING_CERT_ANNOTATION}: the caBundle is not checked against the serving certificate, nor its expiry (the webhook writes the certificate it serves there: is it older than analyze, or without get and update of its configuration? docs/webhook.md#rbac)`,
    ),
  ];
}

export async function readInstall(client: ClusterClient, names: InstallNames, now: Date): Promise<Install> {
  const checks: Check[] = [];
  const install: Install = {
    checks,
    namespaceSelector: DEFAULT_NAMESPACE_SELECTOR,
    objectSelector: DEFAULT_OBJECT_SELECTOR,
    settings: undefined,
    service: undefined,
  };
  const read = await readEntry(client, names.webhookConfig);
  if ('problem' in read) {
    checks.push(read.problem);
    return install;
  }
  const { entry } = read;
  install.namespaceSelector = asObject(entry.namespaceSelector) as LabelSelector;
  install.objectSelector = asObject(entry.objectSelector) as LabelSelector;
  checks.push(...configurationChecks(entry, names.webhookConfig));
  const clientConfig = asObject(entry.clientConfig);
  const ref = asObject(clientConfig.service);
  const service =
    typeof ref.name === 'string' && typeof ref.namespace === 'string'
      ? { namespace: ref.namespace, name: ref.name }
      : undefined;
  install.service = service;
  const namespace = service?.namespace ?? names.namespace;

  // The Deployment: its settings are what the data plane is judged against.
  const deployment = await readDeployment(client, namespace, names.deployment);
  install.settings = deployment.settings;
  checks.push(deployment.check);
  // Its endpoints: the API server calls the Service, which needs a ready pod behind it.
  checks.push(await endpointsCheck(client, service, clientConfig));
  // The certificate: the caBundle must have signed the one the webhook serves, as the webhook publishes it.
  if (typeof clientConfig.caBundle === 'string' && clientConfig.caBundle !== '') {
    const bundle = Buffer.from(clientConfig.caBundle, 'base64').toString('utf8');
    checks.push(...publishedCertChecks(read.config, bundle, service, now, names.webhookConfig));
  }
  return install;
}

/** Our webhook's entry in the MutatingWebhookConfiguration, or the check that says why there is none. */
async function readEntry(
  client: ClusterClient,
  config: string,
): Promise<{ entry: Json; config: Json } | { problem: Check }> {
  const reply = await client.get(
    `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${config}`,
  );
  if (!reply.ok) {
    const problem =
      reply.status === 404
        ? check(
            'webhook-configuration',
            'fail',
            `no MutatingWebhookConfiguration ${config}: the webhook is not installed (docs/install.md); the manifests' namespace label is assumed`,
          )
        : refused(
            'install',
            'webhook-configuration',
            'the webhook configuration',
            reply,
            `get mutatingwebhookconfigurations/${config}`,
            `cannot read MutatingWebhookConfiguration ${config}: ${reply.message}`,
          );
    return { problem };
  }
  const entry = asList(reply.body.webhooks).find((w) => w.name === INJECT_WEBHOOK);
  if (entry !== undefined) return { entry, config: reply.body };
  const missing = `MutatingWebhookConfiguration ${config} has no webhook ${INJECT_WEBHOOK}`;
  return { problem: check('webhook-configuration', 'fail', missing) };
}

/** The webhook's Deployment: its settings, and how many of its replicas are ready. */
async function readDeployment(
  client: ClusterClient,
  namespace: string,
  name: string,
): Promise<{ settings: WebhookSettings | undefined; check: Check }> {
  const deployment = await client.get(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
  if (!deployment.ok) {
    const unread = refused(
      'install',
      'webhook-deployment',
      "the webhook's Deployment and the image it injects",
      deployment,
      `get deployments/${name} in ${namespace}`,
      `cannot read Deployment ${namespace}/${name}: ${deployment.message}`,
    );
    return { settings: undefined, check: unread };
  }
  const settings = webhookSettings(deployment.body);
  const status = asObject(deployment.body.status);
  const wanted = Number(asObject(deployment.body.spec).replicas ?? 1);
  const ready = Number(status.readyReplicas ?? 0);
  const problems = settings.problems.length === 0 ? '' : `; ${settings.problems.join('; ')}`;
  return {
    settings,
    check: check(
      'webhook-deployment',
      ready === 0 ? 'fail' : ready < wanted ? 'warn' : 'ok',
      `${namespace}/${name}: ${ready}/${wanted} ready, injects image ${settings.image}, placement ${settings.placement}${problems}`,
    ),
  };
}

/** The ready endpoints of the Service the configuration names, or that it names a URL. */
async function endpointsCheck(
  client: ClusterClient,
  service: { namespace: string; name: string } | undefined,
  clientConfig: Json,
): Promise<Check> {
  if (service === undefined) {
    const url = typeof clientConfig.url === 'string' ? clientConfig.url : 'none';
    return check(
      'webhook-endpoints',
      'ok',
      `clientConfig.url ${url}: called directly, no Service in between`,
    );
  }
  const selector = encodeURIComponent(`kubernetes.io/service-name=${service.name}`);
  const slices = await client.get(
    `/apis/discovery.k8s.io/v1/namespaces/${service.namespace}/endpointslices?labelSelector=${selector}`,
  );
  if (!slices.ok) {
    return refused(
      'install',
      'webhook-endpoints',
      "the webhook Service's endpoints",
      slices,
      `list endpointslices in ${service.namespace}`,
      `cannot read the endpoints of ${service.namespace}/${service.name}: ${slices.message}`,
    );
  }
  const endpoints = asList(slices.body.items).flatMap((s) => asList(s.endpoints));
  const ready = endpoints.filter((e) => asObject(e.conditions).ready !== false).length;
  return ready === 0
    ? check(
        'webhook-endpoints',
        'fail',
        `Service ${service.namespace}/${service.name} has no ready endpoint: every pod is admitted without the companion`,
      )
    : check(
        'webhook-endpoints',
        'ok',
        `Service ${service.namespace}/${service.name}: ${ready} ready endpoint${ready === 1 ? '' : 's'}`,
      );
}
