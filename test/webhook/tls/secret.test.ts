// Reading the Secret (ours, not ours, ours but unreadable) and the caBundle decisions, as tables of named cases.

import { describe, expect, it } from 'vitest';
import {
  bundleFor,
  distrust,
  type WebhookConfiguration,
  withBundle,
} from '../../../src/webhook/tls/ca-bundle.js';
import { carryOut, fresh, POLICY, type Policy } from '../../../src/webhook/tls/rotation.js';
import { type KubeSecret, LABELS, readSecret, secretFor } from '../../../src/webhook/tls/secret.js';

const policy: Policy = { ...POLICY, dnsNames: ['hook.ns.svc'] };
const now = Date.now();
const material = fresh(policy, now);
const other = fresh(policy, now);
const ours = secretFor('tls', 'ns', material, '7');
const b64 = (text: string) => Buffer.from(text).toString('base64');
const edit = (
  data: Record<string, string | undefined>,
  annotations?: Record<string, string>,
): KubeSecret => ({
  ...ours,
  metadata: { ...ours.metadata, ...(annotations === undefined ? {} : { annotations }) },
  data: Object.fromEntries(
    Object.entries({ ...ours.data, ...data }).filter(([, v]) => v !== undefined),
  ) as Record<string, string>,
});

describe('readSecret', () => {
  it.each<{ name: string; secret: KubeSecret | undefined; kind: string; why?: string }>([
    { name: 'absent', secret: undefined, kind: 'absent' },
    {
      name: 'without our label',
      secret: { ...ours, metadata: { name: 'tls', labels: {} } },
      kind: 'foreign',
    },
    {
      name: 'managed by someone else',
      secret: {
        ...ours,
        metadata: { name: 'tls', labels: { 'app.kubernetes.io/managed-by': 'cert-manager' } },
      },
      kind: 'foreign',
    },
    { name: 'ours', secret: ours, kind: 'ours' },
    {
      name: 'ours without tls.key',
      secret: edit({ 'tls.key': undefined }),
      kind: 'unreadable',
      why: 'no tls.key',
    },
    { name: 'ours with no data', secret: { ...ours, data: {} }, kind: 'unreadable', why: 'no ca.crt' },
    {
      name: 'ours with garbage',
      secret: edit({ 'ca.crt': b64('garbage') }),
      kind: 'unreadable',
      why: 'ca.crt is no PEM certificate',
    },
    {
      name: 'ours with a key of another certificate',
      secret: edit({ 'tls.key': b64(other.serving.key) }),
      kind: 'unreadable',
      why: 'tls.key is not the key of tls.crt',
    },
    {
      name: 'ours with a key that is no key',
      secret: edit({ 'ca.key': b64('nope') }),
      kind: 'unreadable',
      why: 'ca.key is no PEM private key',
    },
    {
      name: 'a staged CA without its time',
      secret: edit({ 'ca-next.crt': b64(other.ca.cert), 'ca-next.key': b64(other.ca.key) }),
      kind: 'unreadable',
      why: 'annotation osm-healthcheck.flomesh.io/ca-staged-at is not a time: undefined',
    },
  ])('$name', ({ secret, kind, why }) => {
    const reading = readSecret(secret);
    expect(reading.kind).toBe(kind);
    if (why !== undefined)
      expect(reading).toMatchObject({ why: expect.stringContaining(why), resourceVersion: '7' });
  });

  it.each(['stage-ca', 'switch-ca', 'drop-previous-ca'] as const)(
    'round-trips the material after %s',
    (step) => {
      const staged = carryOut('stage-ca', material, policy, now);
      const after =
        step === 'stage-ca'
          ? staged
          : step === 'switch-ca'
            ? carryOut('switch-ca', staged, policy, now)
            : carryOut('drop-previous-ca', carryOut('switch-ca', staged, policy, now), policy, now);
      const secret = secretFor('tls', 'ns', after);
      expect(secret.metadata.labels).toEqual(LABELS);
      expect(readSecret(secret)).toEqual({ kind: 'ours', material: after, resourceVersion: undefined });
    },
  );
});

describe('caBundle', () => {
  const config = (...bundles: (string | undefined)[]): WebhookConfiguration => ({
    metadata: { name: 'osm-healthcheck', resourceVersion: '3' },
    webhooks: bundles.map((caBundle, i) => ({
      name: `w${i}`,
      clientConfig: { url: 'https://x', ...(caBundle === undefined ? {} : { caBundle }) },
    })),
  });
  const bundle = bundleFor(material);

  it.each([
    { name: 'every entry already set', config: config(b64(bundle), b64(bundle)), changes: false },
    { name: 'one entry empty', config: config(b64(bundle), undefined), changes: true },
    { name: 'one entry another CA', config: config(b64(bundle), b64(other.ca.cert)), changes: true },
    { name: 'no entries', config: config(), changes: false },
  ])('withBundle: $name', ({ config, changes }) => {
    const updated = withBundle(config, bundle);
    expect(updated !== undefined).toBe(changes);
    if (updated !== undefined) {
      expect(updated.metadata.resourceVersion).toBe('3');
      for (const w of updated.webhooks ?? [])
        expect(w.clientConfig).toEqual({ url: 'https://x', caBundle: b64(bundle) });
    }
  });

  it.each([
    {
      name: 'trusted by every entry',
      config: config(b64(bundle), b64(bundle + other.ca.cert)),
      why: undefined,
    },
    {
      name: 'no entries',
      config: config(),
      why: 'MutatingWebhookConfiguration osm-healthcheck has no webhooks',
    },
    {
      name: 'one entry empty',
      config: config(b64(bundle), undefined),
      why: 'the caBundle of webhooks[1] (w1) does not trust the serving certificate',
    },
    {
      name: 'another CA',
      config: config(b64(other.ca.cert)),
      why: 'the caBundle of webhooks[0] (w0) does not trust the serving certificate',
    },
    {
      name: 'garbage',
      config: config(b64('garbage')),
      why: 'the caBundle of webhooks[0] (w0) does not trust the serving certificate',
    },
  ])('distrust: $name', ({ config, why }) => {
    expect(distrust(config, material.serving.cert)).toBe(why);
  });
});
