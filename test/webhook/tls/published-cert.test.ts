// The serving certificate the webhook publishes for analyze: only CERTIFICATE blocks (never a key, even from a
// --tls-cert file that holds one), written only when it differs; with certificate files, published at start,
// again at each reload, and put back within a resync when someone removes it, against the stand-in API server.

import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  publicChain,
  SERVING_CERT_ANNOTATION,
  withServingCert,
} from '../../../src/webhook/tls/published-cert.js';
import { fileTls } from '../../../src/webhook/tls-source.js';
import { type KubeStandin, startKubeStandin, webhookConfiguration } from '../../helpers/kube-standin.js';
import { makeTestCert, type TestCert } from '../../helpers/tls.js';
import { type Harness, startHarness } from '../harness.js';
import { CONFIG, NAMESPACE, SECRET, SERVICE } from './replica.js';

describe('publicChain and withServingCert', () => {
  const cert = makeTestCert();
  afterAll(() => cert.cleanup());

  it('keeps the CERTIFICATE blocks of a PEM text and drops a key beside them', () => {
    const chain = publicChain(`${cert.key}${cert.cert}junk\n${cert.cert}`);
    expect(chain).toBe(`${cert.cert.trim()}\n${cert.cert.trim()}\n`);
    expect(chain).not.toMatch(/PRIVATE KEY/);
  });

  it('a configuration already holding the chain is left alone; another is a copy with it', () => {
    const config = { metadata: { name: 'c', annotations: { other: 'x' } } };
    const wanted = withServingCert(config, cert.cert);
    expect(wanted?.metadata.annotations).toEqual({ other: 'x', [SERVING_CERT_ANNOTATION]: cert.cert });
    expect(config.metadata.annotations).toEqual({ other: 'x' });
    expect(withServingCert(wanted ?? config, cert.cert)).toBeUndefined();
  });
});

describe('certificate files: the chain published on the configuration', () => {
  let standin: KubeStandin;
  let harness: Harness | undefined;
  let served: TestCert;
  let next: TestCert;

  beforeEach(async () => {
    standin = await startKubeStandin({ namespace: NAMESPACE, secretName: SECRET, webhookConfig: CONFIG });
    standin.putConfig(CONFIG, webhookConfiguration(CONFIG, NAMESPACE, SERVICE));
    served = makeTestCert('first');
    next = makeTestCert('second');
  });

  afterEach(async () => {
    await harness?.close();
    served.cleanup();
    next.cleanup();
    await standin.close();
  });

  const published = (): string | undefined =>
    standin.config(CONFIG)?.metadata.annotations?.[SERVING_CERT_ANNOTATION];

  it('at start, at each reload, and again after someone removes it; an update only when it differs', async () => {
    // A certificate file that also holds the key, as some tools write it: the key stays in the pod.
    writeFileSync(served.certFile, `${served.cert}${served.key}`);
    const api = { url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile };
    harness = await startHarness({
      cert: served,
      tls: (log) =>
        fileTls(
          served.certFile,
          served.keyFile,
          log,
          { debounceMs: 20, pollMs: 50 },
          {
            api,
            webhookConfig: CONFIG,
            resyncMs: 100,
            backoff: { firstMs: 20, maxMs: 100 },
          },
        ),
    });
    await expect.poll(published).toBe(served.cert);
    const updates = () =>
      standin.log.filter((l) => l.startsWith(`update mutatingwebhookconfigurations ${CONFIG}`)).length;
    // Several resyncs later: GETs only.
    const gets = standin.log.length;
    await expect.poll(() => standin.log.length).toBeGreaterThan(gets + 3);
    expect(updates()).toBe(1);

    writeFileSync(served.keyFile, next.key);
    writeFileSync(served.certFile, next.cert);
    await expect.poll(published).toBe(next.cert);
    expect(updates()).toBe(2);

    standin.putConfig(CONFIG, webhookConfiguration(CONFIG, NAMESPACE, SERVICE));
    await expect.poll(published).toBe(next.cert);
  });

  it('a configuration it may not write: one warning, and the webhook serves on', async () => {
    standin.rbac.denied.add(`update mutatingwebhookconfigurations`);
    const api = { url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile };
    harness = await startHarness({
      cert: served,
      tls: (log) =>
        fileTls(served.certFile, served.keyFile, log, undefined, {
          api,
          webhookConfig: CONFIG,
          resyncMs: 100,
          backoff: { firstMs: 20, maxMs: 100 },
        }),
    });
    const line = await harness.logLine((l) => l.msg === 'serving certificate not published');
    expect(line).toMatchObject({ code: 'OSM_HC_KUBE', err: expect.stringMatching(/403/) });
    expect(published()).toBeUndefined();
  });
});
