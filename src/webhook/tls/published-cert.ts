// The serving certificate chain, public and without its key, as an annotation on the webhook's own
// MutatingWebhookConfiguration: what analyze checks the caBundle and the expiry against, so that no reader but the
// webhook needs its Secret (docs/security.md). Written in both TLS modes, and only when it differs.

import { type Backoff, retryDelay } from '../../kube/api/backoff.js';
import type { KubeApi } from '../../kube/api/in-cluster.js';
import type { Logger } from '../../log.js';
import type { WebhookConfiguration } from './ca-bundle.js';
import { getWebhookConfig, updateWebhookConfig } from './kube-objects.js';

export const SERVING_CERT_ANNOTATION = 'osm-healthcheck.flomesh.io/serving-certificate';

/**
 * The CERTIFICATE blocks of a PEM text, one after the other, and nothing else: a --tls-cert file that also holds
 * a key (some tools write both in one file) publishes no key.
 */
export function publicChain(pem: string): string {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => `${block}\n`).join('');
}

/** The configuration with `pem`'s public chain in the annotation, or undefined when it already holds exactly it. */
export function withServingCert(config: WebhookConfiguration, pem: string): WebhookConfiguration | undefined {
  const chain = publicChain(pem);
  const annotations = config.metadata.annotations ?? {};
  if (annotations[SERVING_CERT_ANNOTATION] === chain) return undefined;
  // A copy: the configuration read from the API server stays as it was.
  return {
    ...config,
    metadata: { ...config.metadata, annotations: { ...annotations, [SERVING_CERT_ANNOTATION]: chain } },
  };
}

export interface PublisherOptions {
  api: KubeApi;
  webhookConfig: string;
  resyncMs: number;
  backoff: Backoff;
  log: Logger;
}

export interface Publisher {
  /** Publish `pem` now and keep it published (a GET every resync, an update only when it differs). */
  serve(pem: string): void;
  close(): void;
}

const ATTEMPTS = 5;

/**
 * --tls-cert files (cert-manager): nothing else in the webhook writes its configuration then, so this keeps the
 * annotation on its own; self-managed TLS writes it beside the caBundle (reconcile.ts).
 */
export function startPublisher(options: PublisherOptions): Publisher {
  const { api, webhookConfig, log } = options;
  let pem: string | undefined;
  let problem: string | undefined;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let queue = Promise.resolve();

  async function pass(cert: string): Promise<void> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const got = await getWebhookConfig(api, webhookConfig);
      if (!got.ok) throw new Error(got.message);
      const wanted = withServingCert(got.body, cert);
      if (wanted === undefined) return;
      const written = await updateWebhookConfig(api, wanted);
      // 409: cert-manager's cainjector wrote the caBundle since our GET; read again.
      if (!written.ok && written.status === 409) continue;
      if (!written.ok) throw new Error(written.message);
      log.info({ webhookConfiguration: webhookConfig }, 'serving certificate published');
      return;
    }
    throw new Error(`${webhookConfig} kept changing under us: ${ATTEMPTS} writes in a row lost`);
  }

  const run = async (): Promise<void> => {
    if (closed || pem === undefined) return;
    clearTimeout(timer);
    let delay = options.resyncMs;
    try {
      await pass(pem);
      failures = 0;
      problem = undefined;
    } catch (err) {
      failures += 1;
      delay = Math.min(options.resyncMs, retryDelay(options.backoff, failures));
      const message = (err as Error).message;
      if (message !== problem)
        log.warn({ code: 'OSM_HC_KUBE', err: message }, 'serving certificate not published');
      problem = message;
    }
    if (closed) return;
    timer = setTimeout(() => {
      queue = queue.then(run);
    }, delay);
    timer.unref();
  };

  return {
    serve(next) {
      pem = next;
      queue = queue.then(run);
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
