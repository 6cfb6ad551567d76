// Self-managed TLS at run time: every `resyncMs` (sooner after a failure, with backoff) GET the Secret, take the
// step rotation.ts decides, serve its certificate, and set the caBundle of every entry of the webhook's own
// MutatingWebhookConfiguration, and the public chain it serves (published-cert.ts), when either differs. A
// periodic GET, not a watch: two small GETs a resync per replica cost the API server nothing, and a GET cannot miss
// an event the way a dropped watch can.

import { X509Certificate } from 'node:crypto';
import type { Logger } from '../../log.js';
import type { KeyPair } from '../certificate.js';
import { type Backoff, retryDelay } from '../cluster-version.js';
import type { KubeApi } from '../kube-api.js';
import { bundleFor, distrust, type WebhookConfiguration, withBundle } from './ca-bundle.js';
import {
  createSecret,
  getSecret,
  getWebhookConfig,
  type KubeFailure,
  updateSecret,
  updateWebhookConfig,
} from './kube-objects.js';
import { withServingCert } from './published-cert.js';
import { decideFor, materialAfter, type Policy } from './rotation.js';
import { LABELS, readSecret, secretFor, type TlsMaterial } from './secret.js';

/** What self-managed TLS tells the metrics besides the pairs it serves. */
export interface TlsEvents {
  /** The CA that signs the serving certificate, at each change: its notAfter, ms since the epoch. */
  ca(notAfterMs: number): void;
  /** The caBundle was written, as it did not hold the Secret's CAs (the first fill included). */
  caBundleRepaired(): void;
}

export interface ReconcileOptions {
  api: KubeApi;
  namespace: string;
  secretName: string;
  webhookConfig: string;
  policy: Policy;
  resyncMs: number;
  backoff: Backoff;
  log: Logger;
  /** The clock certificates are made and judged by (tests move it). */
  now: () => number;
  /** A new serving certificate from the Secret: serve it from now on. */
  serve(pair: KeyPair): void;
  /** Told of the CA in use and of each caBundle written (metrics). */
  events?: TlsEvents | undefined;
}

export interface Reconciler {
  /** Why /readyz answers 503, or undefined when the certificate served is loaded and trusted by the caBundle. */
  notReady(): string | undefined;
  /** Reconcile now (after the one under way, if any); resolves when done, never rejects. */
  resync(): Promise<void>;
  close(): void;
}

/** A problem this pass could not get past: logged once when it starts (or changes), retried with backoff. */
class Stuck extends Error {
  constructor(
    message: string,
    readonly level: 'warn' | 'error' = 'warn',
  ) {
    super(message);
  }
}

const failed = (failure: KubeFailure): Stuck =>
  new Stuck(failure.message, failure.status === 403 ? 'error' : 'warn');
/** A conflict or a lost create race: someone else wrote first; read again at once. */
const lostRace = (failure: KubeFailure): boolean => failure.status === 409;
const ATTEMPTS = 5;

export function keyPairOf(cert: string, key: string): KeyPair {
  const x509 = new X509Certificate(cert);
  return { cert, key, fingerprint: x509.fingerprint256, notAfter: x509.validTo };
}

export function startReconciler(options: ReconcileOptions): Reconciler {
  const { api, namespace, secretName, log } = options;
  const where = `Secret ${namespace}/${secretName}`;
  let served: string | undefined;
  let caInUse: string | undefined;
  let config: WebhookConfiguration | undefined;
  let problem: string | undefined = 'not reconciled yet';
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let queue = Promise.resolve();

  /** The Secret's material after at most one step, written; read again when someone else wrote first. */
  async function settleSecret(): Promise<TlsMaterial> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const got = await getSecret(api, namespace, secretName);
      if (!got.ok && got.failure.status !== 404) throw failed(got.failure);
      const reading = readSecret(got.ok ? got.value : undefined);
      const now = options.now();
      const decision = decideFor(reading, options.policy, now);
      if (decision.action === 'refuse') {
        throw new Stuck(
          `${where} exists without the label app.kubernetes.io/managed-by=${LABELS['app.kubernetes.io/managed-by']}: ` +
            'it is not ours and is left alone; delete it or choose another name with --tls-secret',
          'error',
        );
      }
      const material = materialAfter(reading, decision, options.policy, now);
      if (material === undefined) {
        if (reading.kind !== 'ours') throw new Error(`nothing to write, yet the Secret is ${reading.kind}`);
        return reading.material;
      }
      const resourceVersion =
        reading.kind === 'ours' || reading.kind === 'unreadable' ? reading.resourceVersion : undefined;
      const secret = secretFor(secretName, namespace, material, resourceVersion);
      const written =
        decision.action === 'create' ? await createSecret(api, secret) : await updateSecret(api, secret);
      if (!written.ok && lostRace(written.failure)) continue;
      if (!written.ok) throw failed(written.failure);
      log.info(
        { secret: where, step: decision.action, ...('why' in decision ? { why: decision.why } : {}) },
        'TLS secret written',
      );
      return material;
    }
    throw new Stuck(`${where} kept changing under us: ${ATTEMPTS} writes in a row lost to another writer`);
  }

  /**
   * Sets the caBundle, and the public chain of the certificate served (published-cert.ts), where either differs, in
   * one update; keeps what the API server has as `config`.
   */
  async function settleBundle(bundle: string, servingCert: string): Promise<void> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const got = await getWebhookConfig(api, options.webhookConfig);
      if (!got.ok) {
        if (got.failure.status === 404) config = undefined;
        throw failed(got.failure);
      }
      const bundled = withBundle(got.value, bundle);
      const wanted = withServingCert(bundled ?? got.value, servingCert) ?? bundled;
      if (wanted === undefined) {
        config = got.value;
        return;
      }
      const written = await updateWebhookConfig(api, wanted);
      if (!written.ok && lostRace(written.failure)) continue;
      if (!written.ok) throw failed(written.failure);
      config = written.value;
      if (bundled === undefined) {
        log.info({ webhookConfiguration: options.webhookConfig }, 'serving certificate published');
        return;
      }
      options.events?.caBundleRepaired();
      log.info(
        { webhookConfiguration: options.webhookConfig, webhooks: wanted.webhooks?.length ?? 0 },
        'caBundle set',
      );
      return;
    }
    throw new Stuck(`the caBundle of ${options.webhookConfig} kept changing under us`);
  }

  async function pass(): Promise<void> {
    const material = await settleSecret();
    if (material.ca.cert !== caInUse) {
      options.events?.ca(Date.parse(new X509Certificate(material.ca.cert).validTo));
      caInUse = material.ca.cert;
    }
    if (material.serving.cert !== served) {
      const pair = keyPairOf(material.serving.cert, material.serving.key);
      options.serve(pair);
      served = material.serving.cert;
      log.info(
        { secret: where, fingerprint: pair.fingerprint, notAfter: pair.notAfter },
        'certificate loaded',
      );
    }
    await settleBundle(bundleFor(material), material.serving.cert);
  }

  function report(next: string | undefined, level: 'info' | 'warn' | 'error'): void {
    if (next === problem) return;
    problem = next;
    if (next === undefined)
      log.info({ secret: where, webhookConfiguration: options.webhookConfig }, 'self-managed TLS in place');
    else log[level]({ code: 'OSM_HC_KUBE', err: next }, 'self-managed TLS not in place');
  }

  const run = async (): Promise<void> => {
    if (closed) return;
    clearTimeout(timer);
    let delay = options.resyncMs;
    try {
      await pass();
      failures = 0;
      report(undefined, 'info');
    } catch (err) {
      failures += 1;
      delay = Math.min(options.resyncMs, retryDelay(options.backoff, failures));
      report((err as Error).message, err instanceof Stuck ? err.level : 'warn');
    }
    if (closed) return;
    timer = setTimeout(resync, delay);
    timer.unref();
  };
  const resync = (): Promise<void> => {
    queue = queue.then(run);
    return queue;
  };
  resync();

  return {
    notReady() {
      if (served === undefined) return `no certificate from ${where} yet: ${problem ?? 'reconciling'}`;
      if (config === undefined)
        return `the caBundle of ${options.webhookConfig} is not known: ${problem ?? 'reconciling'}`;
      return distrust(config, served);
    },
    resync,
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
