// The caBundle the API server verifies the webhook with: which CAs it must hold for what the Secret says, whether
// a MutatingWebhookConfiguration already carries it, and whether a bundle trusts a serving certificate.

import { X509Certificate } from 'node:crypto';
import type { TlsMaterial } from './secret.js';

/** The fields of an admissionregistration.k8s.io/v1 MutatingWebhookConfiguration this module reads or writes. */
export interface WebhookConfiguration {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  webhooks?: Array<{ name?: string; clientConfig?: { caBundle?: string } & Record<string, unknown> }>;
}

/**
 * Every CA the Secret holds, oldest first: the same PEM text from a replica that has seen a rotation step and one
 * that has not yet, as long as the set is the same, so two replicas never take turns rewriting it.
 */
export function bundleFor(material: TlsMaterial): string {
  const { rotation } = material;
  const pems = [
    material.ca.cert,
    ...(rotation?.phase === 'staged' ? [rotation.next.cert] : []),
    ...(rotation?.phase === 'switched' ? [rotation.previousCaCert] : []),
  ];
  return pems
    .map((pem) => ({ pem: pem.trim(), notBefore: Date.parse(new X509Certificate(pem).validFrom) }))
    .sort((a, b) => a.notBefore - b.notBefore || (a.pem < b.pem ? -1 : 1))
    .map((ca) => `${ca.pem}\n`)
    .join('');
}

const b64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

/** The configuration with `bundle` in every webhook entry, or undefined when each already has exactly it. */
export function withBundle(config: WebhookConfiguration, bundle: string): WebhookConfiguration | undefined {
  const wanted = b64(bundle);
  const webhooks = config.webhooks ?? [];
  if (webhooks.every((w) => w.clientConfig?.caBundle === wanted)) return undefined;
  // A copy: the configuration read from the API server stays as it was.
  return {
    ...config,
    webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: wanted } })),
  };
}

/** Certificates in a PEM bundle; anything that is not one is skipped, as Go's AppendCertsFromPEM does. */
function certificates(bundle: string): X509Certificate[] {
  const blocks = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.flatMap((block) => {
    try {
      return [new X509Certificate(block)];
    } catch {
      return [];
    }
  });
}

/** Whether one CA of `bundle` signed `servingCert` (what the API server checks, expiry aside). */
export function trusts(bundle: string, servingCert: string): boolean {
  const serving = new X509Certificate(servingCert);
  return certificates(bundle).some((ca) => serving.checkIssued(ca) && serving.verify(ca.publicKey));
}

/** Why the API server would not trust `servingCert` through `config`, or undefined when every entry does. */
export function distrust(config: WebhookConfiguration, servingCert: string): string | undefined {
  const webhooks = config.webhooks ?? [];
  if (webhooks.length === 0) return `MutatingWebhookConfiguration ${config.metadata.name} has no webhooks`;
  for (const [i, w] of webhooks.entries()) {
    const bundle = Buffer.from(w.clientConfig?.caBundle ?? '', 'base64').toString('utf8');
    if (!trusts(bundle, servingCert)) {
      return `the caBundle of webhooks[${i}] (${w.name ?? 'unnamed'}) does not trust the serving certificate`;
    }
  }
  return undefined;
}
