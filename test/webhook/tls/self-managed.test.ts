// Self-managed TLS against the stand-in API server: first start, two replicas racing, renewal, CA rotation, and a
// caBundle edited behind the webhook's back; each judged by a TLS client that trusts only the caBundle.

import { X509Certificate } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVING_CERT_ANNOTATION } from '../../../src/webhook/tls/published-cert.js';
import { LABELS } from '../../../src/webhook/tls/secret.js';
import { type KubeStandin, startKubeStandin, webhookConfiguration } from '../../helpers/kube-standin.js';
import type { Harness } from '../harness.js';
import {
  type Clock,
  CONFIG,
  caBundles,
  NAMESPACE,
  readyz,
  SECRET,
  SERVICE,
  startReplica,
  trustedHandshake,
} from './replica.js';

let standin: KubeStandin;
let clock: Clock;
const replicas: Harness[] = [];

beforeEach(async () => {
  standin = await startKubeStandin({ namespace: NAMESPACE, secretName: SECRET, webhookConfig: CONFIG });
  standin.putConfig(CONFIG, webhookConfiguration(CONFIG, NAMESPACE, SERVICE));
  clock = { now: Date.now() };
});

afterEach(async () => {
  await Promise.all(replicas.splice(0).map((r) => r.close()));
  await standin.close();
});

async function start(count = 1): Promise<Harness[]> {
  const started = await Promise.all(Array.from({ length: count }, () => startReplica(standin, clock)));
  replicas.push(...started);
  return started;
}

/** Every replica is reached by a client that trusts only the caBundle (each entry's) and serves `fingerprint`. */
async function allTrusted(of: Harness[]): Promise<string[]> {
  const bundles = caBundles(standin);
  expect(bundles).toHaveLength(2);
  const served: string[] = [];
  for (const replica of of) {
    for (const bundle of bundles) served.push(await trustedHandshake(replica.webhook.port, bundle));
  }
  return [...new Set(served)];
}

const secretCert = (): string =>
  Buffer.from(standin.secret(SECRET)?.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
/** The certificate the webhook published on its configuration, for analyze. */
const published = (): string | undefined =>
  standin.config(CONFIG)?.metadata.annotations?.[SERVING_CERT_ANNOTATION];

describe('self-managed TLS', () => {
  it('first start: creates the Secret, sets every caBundle, serves its certificate, then turns ready', async () => {
    const [replica] = (await start()) as [Harness];
    await expect.poll(() => readyz(replica.webhook.port)).toEqual({ status: 200, body: 'ok\n' });
    const secret = standin.secret(SECRET);
    expect(secret?.metadata.labels).toEqual(LABELS);
    expect(Object.keys(secret?.data ?? {}).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    expect(caBundles(standin)).toEqual([
      Buffer.from(secret?.data['ca.crt'], 'base64').toString(),
      Buffer.from(secret?.data['ca.crt'], 'base64').toString(),
    ]);
    expect(await allTrusted([replica])).toEqual([replica.webhook.keyPair().fingerprint]);
    expect(standin.log.filter((l) => l.startsWith('create secrets'))).toEqual(['create secrets 201']);
    // The certificate it serves, public, beside the caBundle: written in the same update, no key in it.
    expect(published()).toBe(secretCert());
    expect(published()).not.toMatch(/PRIVATE KEY/);
    expect(standin.log.filter((l) => l.startsWith('update mutatingwebhookconfigurations'))).toHaveLength(1);
    await replica.logLine((l) => l.msg === 'self-managed TLS in place');
    // The metrics: both certificates' expiry, the caBundle's first fill, no rotation (the throwaway is none).
    const metrics = await replica.metrics();
    const notAfter = (pem: string) => Date.parse(new X509Certificate(pem).validTo) / 1000;
    const expiry = 'osm_healthcheck_webhook_certificate_not_after_timestamp_seconds';
    expect(metrics.get(`${expiry}{certificate="serving"}`)).toBe(notAfter(secretCert()));
    expect(metrics.get(`${expiry}{certificate="ca"}`)).toBe(
      notAfter(Buffer.from(secret?.data['ca.crt'], 'base64').toString()),
    );
    expect(metrics.get('osm_healthcheck_webhook_ca_bundle_repairs_total')).toBe(1);
    expect(metrics.get('osm_healthcheck_webhook_certificate_rotations_total')).toBe(0);
  });

  it('two replicas racing on first start: one creates, the other meets AlreadyExists and uses its Secret', async () => {
    // Both read "no Secret" before either writes one.
    standin.holdSecretGets(2);
    const both = await start(2);
    await expect
      .poll(() => Promise.all(both.map((r) => readyz(r.webhook.port).then((a) => a.status))))
      .toEqual([200, 200]);
    expect(standin.log.filter((l) => l.startsWith('create secrets')).sort()).toEqual([
      'create secrets 201',
      'create secrets 409',
    ]);
    const served = await allTrusted(both);
    expect(served).toEqual([both[0]?.webhook.keyPair().fingerprint]);
    expect(both[1]?.webhook.keyPair().cert).toBe(secretCert());
  });

  it('renews the serving certificate under the same CA: the caBundle does not change', async () => {
    const [replica] = (await start()) as [Harness];
    await expect.poll(() => readyz(replica.webhook.port).then((a) => a.status)).toBe(200);
    const first = replica.webhook.keyPair().fingerprint;
    const bundles = caBundles(standin);
    clock.now += 41_000;
    await expect.poll(() => replica.webhook.keyPair().fingerprint).not.toBe(first);
    expect(caBundles(standin)).toEqual(bundles);
    // The caBundle stays; the published certificate follows the one served.
    await expect.poll(published).toBe(replica.webhook.keyPair().cert);
    expect(await allTrusted([replica])).toEqual([replica.webhook.keyPair().fingerprint]);
    await replica.logLine((l) => l.msg === 'TLS secret written' && l.step === 'renew-serving');
    expect((await replica.metrics()).get('osm_healthcheck_webhook_certificate_rotations_total')).toBe(1);
  });

  it('rotates the CA with an overlap: every replica is trusted by the caBundle at every step', async () => {
    const both = await start(2);
    await expect
      .poll(() => Promise.all(both.map((r) => readyz(r.webhook.port).then((a) => a.status))))
      .toEqual([200, 200]);
    const firstCa = standin.secret(SECRET)?.data['ca.crt'];
    // At each step, while the replicas catch up, a client trusting only the caBundle of the moment reaches both.
    const step = async (advanceMs: number, reached: () => boolean) => {
      clock.now += advanceMs;
      await expect
        .poll(async () => {
          await allTrusted(both);
          return reached() && new Set(both.map((r) => r.webhook.keyPair().cert)).size === 1;
        })
        .toBe(true);
      await allTrusted(both);
    };
    const blocks = () => caBundles(standin)[0]?.match(/BEGIN CERTIFICATE/g)?.length;
    await step(161_000, () => standin.secret(SECRET)?.data['ca-next.crt'] !== undefined && blocks() === 2);
    await step(
      10_000,
      () =>
        standin.secret(SECRET)?.data['ca-previous.crt'] !== undefined &&
        secretCert() === both[0]?.webhook.keyPair().cert,
    );
    await step(10_000, () => standin.secret(SECRET)?.data['ca-previous.crt'] === undefined && blocks() === 1);
    expect(standin.secret(SECRET)?.data['ca.crt']).not.toBe(firstCa);
    const written = both.flatMap((r) =>
      r.logs.filter((l) => l.msg === 'TLS secret written').map((l) => l.step),
    );
    expect(written).toEqual(expect.arrayContaining(['create', 'stage-ca', 'switch-ca', 'drop-previous-ca']));
  });

  it('repairs a caBundle someone else changed', async () => {
    const [replica] = (await start()) as [Harness];
    await expect.poll(() => readyz(replica.webhook.port).then((a) => a.status)).toBe(200);
    const config = standin.config(CONFIG);
    const bundles = caBundles(standin);
    standin.putConfig(CONFIG, {
      ...config,
      webhooks: config?.webhooks.map((w: { clientConfig: object }) => ({
        ...w,
        clientConfig: { ...w.clientConfig, caBundle: '' },
      })),
    });
    await expect.poll(() => caBundles(standin)).toEqual(bundles);
    expect(await allTrusted([replica])).toEqual([replica.webhook.keyPair().fingerprint]);
    // The first fill, and this repair.
    expect((await replica.metrics()).get('osm_healthcheck_webhook_ca_bundle_repairs_total')).toBe(2);
  });

  it('reads the service account token again at every request: a rotated token keeps working', async () => {
    const [replica] = (await start()) as [Harness];
    await expect.poll(() => readyz(replica.webhook.port).then((a) => a.status)).toBe(200);
    standin.rotateToken();
    const bundles = caBundles(standin);
    standin.putConfig(CONFIG, { ...standin.config(CONFIG), webhooks: [] });
    standin.putConfig(CONFIG, webhookConfiguration(CONFIG, NAMESPACE, SERVICE));
    await expect.poll(() => caBundles(standin)).toEqual(bundles);
    expect(standin.log).not.toContain('get secrets osm-healthcheck-webhook-tls 401');
  });
});
