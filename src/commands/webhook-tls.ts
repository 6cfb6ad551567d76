// `webhook`'s TLS flags -> its TLS source: --tls-cert and --tls-key together are files (cert-manager); neither is
// self-managed TLS, which needs the API server, the namespace, and the names of its Service, Secret and
// MutatingWebhookConfiguration.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeValue, UsageError } from '../errors.js';
import { badFlagValue, flagOrEnv, sourceName, usageError } from '../flags.js';
import type { Logger } from '../log.js';
import { BACKOFF } from '../webhook/cluster-version.js';
import { type KubeApi, SERVICE_ACCOUNT_DIR } from '../webhook/kube-api.js';
import { POLICY } from '../webhook/tls/rotation.js';
import { fileTls, selfManagedTls, type TlsSource } from '../webhook/tls-source.js';

export const TLS_FLAGS = {
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  namespace: { type: 'string' },
  service: { type: 'string' },
  'tls-secret': { type: 'string' },
  'webhook-config': { type: 'string' },
  'tls-resync': { type: 'string' },
} as const;

export const TLS_DEFAULTS = {
  service: 'osm-healthcheck-webhook',
  secret: 'osm-healthcheck-webhook-tls',
  webhookConfig: 'osm-healthcheck',
  resyncSeconds: 30,
} as const;

type TlsValues = { [K in keyof typeof TLS_FLAGS]?: string | undefined };

/** Files, self-managed, or a usage error; undefined `api` means there is no API server to ask. */
export type TlsChoice = { mode: 'files'; certFile: string; keyFile: string } | { mode: 'self-managed' };

export function tlsChoice(values: TlsValues): TlsChoice {
  const certFile = flagOrEnv(values['tls-cert'], 'OSM_HEALTHCHECK_TLS_CERT');
  const keyFile = flagOrEnv(values['tls-key'], 'OSM_HEALTHCHECK_TLS_KEY');
  if (certFile !== undefined && keyFile !== undefined) return { mode: 'files', certFile, keyFile };
  if (certFile === undefined && keyFile === undefined) return { mode: 'self-managed' };
  const [given, file, missing] =
    certFile === undefined
      ? [sourceName(values['tls-key'], '--tls-key', 'OSM_HEALTHCHECK_TLS_KEY'), keyFile, '--tls-cert']
      : [sourceName(values['tls-cert'], '--tls-cert', 'OSM_HEALTHCHECK_TLS_CERT'), certFile, '--tls-key'];
  throw usageError(
    `${given} ${describeValue(file)} without ${missing}`,
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

function namespaceOf(flag: string | undefined): string {
  const given = flagOrEnv(flag, 'OSM_HEALTHCHECK_NAMESPACE');
  if (given !== undefined) {
    return name(given, sourceName(flag, '--namespace', 'OSM_HEALTHCHECK_NAMESPACE'), true);
  }
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
  values: TlsValues,
  api: KubeApi | undefined,
  log: Logger,
): Promise<TlsSource> {
  const webhookConfig = name(
    flagOrEnv(values['webhook-config'], 'OSM_HEALTHCHECK_WEBHOOK_CONFIG') ?? TLS_DEFAULTS.webhookConfig,
    sourceName(values['webhook-config'], '--webhook-config', 'OSM_HEALTHCHECK_WEBHOOK_CONFIG'),
    false,
  );
  const resync = flagOrEnv(values['tls-resync'], 'OSM_HEALTHCHECK_TLS_RESYNC_SECONDS');
  const resyncMs =
    1000 *
    (resync === undefined
      ? TLS_DEFAULTS.resyncSeconds
      : seconds(
          resync,
          sourceName(values['tls-resync'], '--tls-resync', 'OSM_HEALTHCHECK_TLS_RESYNC_SECONDS'),
        ));
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
  const namespace = namespaceOf(values.namespace);
  const service = name(
    flagOrEnv(values.service, 'OSM_HEALTHCHECK_WEBHOOK_SERVICE') ?? TLS_DEFAULTS.service,
    sourceName(values.service, '--service', 'OSM_HEALTHCHECK_WEBHOOK_SERVICE'),
    true,
  );
  return selfManagedTls({
    api,
    namespace,
    secretName: name(
      flagOrEnv(values['tls-secret'], 'OSM_HEALTHCHECK_TLS_SECRET') ?? TLS_DEFAULTS.secret,
      sourceName(values['tls-secret'], '--tls-secret', 'OSM_HEALTHCHECK_TLS_SECRET'),
      false,
    ),
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
