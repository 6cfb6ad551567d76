// `webhook`'s TLS flags -> its TLS source: --tls-cert and --tls-key together are files (cert-manager); neither is
// self-managed TLS, which needs the API server, the namespace, and the names of its Service, Secret and
// MutatingWebhookConfiguration.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeValue, UsageError } from '../errors.js';
import { badFlagValue, usageError } from '../flags.js';
import { BACKOFF } from '../kube/api/backoff.js';
import { type KubeApi, SERVICE_ACCOUNT_DIR } from '../kube/api/in-cluster.js';
import type { Logger } from '../log.js';
import { type Given, TLS_DEFAULTS, type WebhookArgs, type WebhookFlag } from '../webhook/settings.js';
import { POLICY } from '../webhook/tls/rotation.js';
import { fileTls, selfManagedTls, type TlsSource } from '../webhook/tls-source.js';

/** Files, self-managed, or a usage error; undefined `api` means there is no API server to ask. */
export type TlsChoice = { mode: 'files'; certFile: string; keyFile: string } | { mode: 'self-managed' };

export function tlsChoice(args: WebhookArgs): TlsChoice {
  const cert = args('tls-cert');
  const key = args('tls-key');
  if (cert !== undefined && key !== undefined)
    return { mode: 'files', certFile: cert.text, keyFile: key.text };
  if (cert === undefined && key === undefined) return { mode: 'self-managed' };
  const [given, missing] = cert === undefined ? [key as Given, '--tls-cert'] : [cert, '--tls-key'];
  throw usageError(
    `${given.from} ${describeValue(given.text)} without ${missing}`,
    'both for certificate files, or neither for self-managed TLS',
  );
}

/** A DNS-1123 name, as Kubernetes requires of object names (labels for a namespace and a Service). */
function name(value: string, flag: string, label: boolean): string {
  const pattern = label
    ? /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/
    : /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  if (!pattern.test(value)) {
    throw badFlagValue(flag, value, `a Kubernetes ${label ? 'DNS label' : 'object name'}`);
  }
  return value;
}

function namespaceOf(given: Given | undefined): string {
  if (given !== undefined) return name(given.text, given.from, true);
  const file = join(SERVICE_ACCOUNT_DIR, 'namespace');
  try {
    return name(readFileSync(file, 'utf8').trim(), file, true);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw usageError(
      `self-managed TLS has no namespace: cannot read ${file}: ${(err as Error).message}`,
      '--namespace, or env OSM_HEALTHCHECK_NAMESPACE, outside a pod',
    );
  }
}

function seconds(text: string, flag: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > 86_400) {
    throw badFlagValue(flag, text, 'whole seconds 1-86400');
  }
  return value;
}

export async function tlsSource(
  choice: TlsChoice,
  args: WebhookArgs,
  api: KubeApi | undefined,
  log: Logger,
): Promise<TlsSource> {
  // A name not given is the default, which is one: only a given one is checked (and named in the error).
  const named = (flag: WebhookFlag, fallback: string, label: boolean) => {
    const given = args(flag);
    return given === undefined ? fallback : name(given.text, given.from, label);
  };
  const webhookConfig = named('webhook-config', TLS_DEFAULTS.webhookConfig, false);
  const resync = args('tls-resync');
  const resyncMs =
    1000 * (resync === undefined ? TLS_DEFAULTS.resyncSeconds : seconds(resync.text, resync.from));
  const backoff = { firstMs: BACKOFF.firstMs, maxMs: resyncMs };
  if (choice.mode === 'files') {
    // Without an API server (a local run) there is no configuration to publish the certificate on.
    const publish = api === undefined ? undefined : { api, webhookConfig, resyncMs, backoff };
    return fileTls(choice.certFile, choice.keyFile, log, undefined, publish);
  }
  if (api === undefined) {
    throw usageError(
      'self-managed TLS (no --tls-cert/--tls-key) needs the API server, but KUBERNETES_SERVICE_HOST is not set and --kube-api is not given',
      '--kube-api URL, or --tls-cert and --tls-key',
    );
  }
  const namespace = namespaceOf(args('namespace'));
  const service = named('service', TLS_DEFAULTS.service, true);
  return selfManagedTls({
    api,
    namespace,
    secretName: named('tls-secret', TLS_DEFAULTS.secret, false),
    webhookConfig,
    policy: {
      ...POLICY,
      dnsNames: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`],
    },
    resyncMs,
    backoff,
    log,
    now: Date.now,
  });
}
