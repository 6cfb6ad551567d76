// The Secret that holds the webhook's CA and serving certificate, read into TlsMaterial and written back. "Ours" is
// decided by the managed-by label alone: a Secret of that name without it belongs to someone else and is never
// overwritten. What each key holds, and the two annotations that time a CA rotation, are listed in docs/webhook.md.

import { createPrivateKey as createKey, X509Certificate } from 'node:crypto';
import type { Issued } from './x509.js';

export const LABELS = {
  'app.kubernetes.io/managed-by': 'osm-healthcheck-webhook',
  'app.kubernetes.io/part-of': 'osm-healthcheck',
} as const;

export const KEYS = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  cert: 'tls.crt',
  key: 'tls.key',
  nextCaCert: 'ca-next.crt',
  nextCaKey: 'ca-next.key',
  previousCaCert: 'ca-previous.crt',
} as const;

export const ANNOTATIONS = {
  stagedAt: 'osm-healthcheck.flomesh.io/ca-staged-at',
  switchedAt: 'osm-healthcheck.flomesh.io/ca-switched-at',
} as const;

/** What the webhook keeps in its Secret. A CA rotation is at most one of `next` (staged) or `previous` (overlap). */
export interface TlsMaterial {
  /** Signs `serving`; its certificate is in the caBundle. */
  ca: Issued;
  serving: Issued;
  rotation?:
    | { phase: 'staged'; next: Issued; at: Date }
    | { phase: 'switched'; previousCaCert: string; at: Date };
}

/** The fields of a v1 Secret this module reads or writes. */
export interface KubeSecret {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  type?: string;
  data?: Record<string, string>;
}

export type SecretReading =
  | { kind: 'absent' }
  | { kind: 'foreign' }
  | { kind: 'unreadable'; why: string; resourceVersion: string | undefined }
  | { kind: 'ours'; material: TlsMaterial; resourceVersion: string | undefined };

const isOurs = (secret: KubeSecret): boolean =>
  secret.metadata.labels?.['app.kubernetes.io/managed-by'] === LABELS['app.kubernetes.io/managed-by'];

export function readSecret(secret: KubeSecret | undefined): SecretReading {
  if (secret === undefined) return { kind: 'absent' };
  if (!isOurs(secret)) return { kind: 'foreign' };
  const resourceVersion = secret.metadata.resourceVersion;
  try {
    return { kind: 'ours', material: materialOf(secret), resourceVersion };
  } catch (err) {
    return { kind: 'unreadable', why: (err as Error).message, resourceVersion };
  }
}

function text(data: Record<string, string>, key: string): string {
  const value = data[key];
  if (value === undefined) throw new Error(`no ${key}`);
  return Buffer.from(value, 'base64').toString('utf8');
}

/** A certificate and the key that goes with it, or an Error naming the key that is wrong. */
function pair(data: Record<string, string>, certKey: string, keyKey: string): Issued {
  const issued = { cert: text(data, certKey), key: text(data, keyKey) };
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(issued.cert);
  } catch (err) {
    throw new Error(`${certKey} is no PEM certificate: ${(err as Error).message}`);
  }
  let matches = false;
  try {
    matches = cert.checkPrivateKey(createKey(issued.key));
  } catch (err) {
    throw new Error(`${keyKey} is no PEM private key: ${(err as Error).message}`);
  }
  if (!matches) throw new Error(`${keyKey} is not the key of ${certKey}`);
  return issued;
}

function date(annotations: Record<string, string> | undefined, name: string): Date {
  const value = annotations?.[name];
  const at = value === undefined ? Number.NaN : Date.parse(value);
  if (Number.isNaN(at)) throw new Error(`annotation ${name} is not a time: ${JSON.stringify(value)}`);
  return new Date(at);
}

function materialOf(secret: KubeSecret): TlsMaterial {
  const data = secret.data ?? {};
  const { annotations } = secret.metadata;
  const material: TlsMaterial = {
    ca: pair(data, KEYS.caCert, KEYS.caKey),
    serving: pair(data, KEYS.cert, KEYS.key),
  };
  if (data[KEYS.nextCaCert] !== undefined) {
    const next = pair(data, KEYS.nextCaCert, KEYS.nextCaKey);
    return { ...material, rotation: { phase: 'staged', next, at: date(annotations, ANNOTATIONS.stagedAt) } };
  }
  if (data[KEYS.previousCaCert] !== undefined) {
    const previousCaCert = text(data, KEYS.previousCaCert);
    try {
      new X509Certificate(previousCaCert);
    } catch (err) {
      throw new Error(`${KEYS.previousCaCert} is no PEM certificate: ${(err as Error).message}`);
    }
    const at = date(annotations, ANNOTATIONS.switchedAt);
    return { ...material, rotation: { phase: 'switched', previousCaCert, at } };
  }
  return material;
}

const b64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

/** The Secret for `material`; `resourceVersion` makes an update that fails on a concurrent change (409). */
export function secretFor(
  name: string,
  namespace: string,
  material: TlsMaterial,
  resourceVersion?: string,
): KubeSecret & { metadata: { namespace: string } } {
  const data: Record<string, string> = {
    [KEYS.caCert]: b64(material.ca.cert),
    [KEYS.caKey]: b64(material.ca.key),
    [KEYS.cert]: b64(material.serving.cert),
    [KEYS.key]: b64(material.serving.key),
  };
  const annotations: Record<string, string> = {};
  const { rotation } = material;
  if (rotation?.phase === 'staged') {
    data[KEYS.nextCaCert] = b64(rotation.next.cert);
    data[KEYS.nextCaKey] = b64(rotation.next.key);
    annotations[ANNOTATIONS.stagedAt] = rotation.at.toISOString();
  } else if (rotation?.phase === 'switched') {
    data[KEYS.previousCaCert] = b64(rotation.previousCaCert);
    annotations[ANNOTATIONS.switchedAt] = rotation.at.toISOString();
  }
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: { ...LABELS },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    type: 'Opaque',
    data,
  };
}
