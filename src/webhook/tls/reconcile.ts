// Self-managed TLS at run time: every `resyncMs` (sooner after a failure, with backoff) GET the Secret, take the
// step rotation.ts decides, serve its certificate, and set the caBundle of every entry of the webhook's own
// MutatingWebhookConfiguration, and the public chain it serves (published-cert.ts), when either differs. A
// periodic GET, not a watch: two small GETs a resync per replica cost the API server nothing, and a GET cannot miss
// an event the way a dropped watch can.

import { X509Certificate } from 'node:crypto';
import { type Backoff, retryDelay } from '../../kube/api/backoff.js';
import type { KubeApi } from '../../kube/api/in-cluster.js';
import type { Refusal } from '../../kube/api/reply.js';
import type { Logger } from '../../log.js';
import type { KeyPair } from '../certificate.js';
import { bundleFor, distrust, type WebhookConfiguration, withBundle } from './ca-bundle.js';
import {
  createSecret,
  getSecret,
  getWebhookConfig,
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

const failed = (refusal: Refusal): Stuck =>
  new Stuck(refusal.message, refusal.status === 403 ? 'error' : 'warn');
/** A conflict or a lost create race: someone else wrote first; read again at once. */
const lostRace = (reply: { ok: boolean; status?: number }): boolean => !reply.ok && reply.status === 409;
const ATTEMPTS = 5;

export function keyPairOf(cert: string, key: string): KeyPair {
  const x509 = new X509Certificate(cert);
  return { cert, key, fingerprint: x509.fingerprint256, notAfter: x509.validTo };
}

/** What a reconciler knows between passes. */
interface State {
  /** The serving certificate served, and the CA that signs it. */
  served: string | undefined;
  caInUse: string | undefined;
  /** The MutatingWebhookConfiguration as the API server last had it. */
  config: WebhookConfiguration | undefined;
  /** Why self-managed TLS is not in place, as last logged. */
  problem: string | undefined;
  failures: number;
}

const whereOf = (options: ReconcileOptions) => `Secret ${options.namespace}/${options.secretName}`;

/** The Secret's material after at most one step, written; read again when someone else wrote first. */
async function settleSecret(options: ReconcileOptions): Promise<TlsMaterial> {
  const { api, namespace, secretName } = options;
  const where = whereOf(options);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const got = await getSecret(api, namespace, secretName);
    if (!got.ok && got.status !== 404) throw failed(got);
    const reading = readSecret(got.ok ? got.body : undefined);
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
    if (lostRace(written)) continue;
    if (!written.ok) throw failed(written);
    options.log.info(
      { secret: where, step: decision.action, ...('why' in decision ? { why: decision.why } : {}) },
      'TLS secret written',
    );
    return material;
  }
  throw new Stuck(`${where} kept changing under us: ${ATTEMPTS} writes in a row lost to another writer`);
}

/**
 * Sets the caBundle, and the public chain of the certificate served (published-cert.ts), where either differs, in
 * one update; keeps what the API server has as `state.config`.
 */
async function settleBundle(
  options: ReconcileOptions,
  state: State,
  bundle: string,
  servingCert: string,
): Promise<void> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const got = await getWebhookConfig(options.api, options.webhookConfig);
    if (!got.ok) {
      if (got.status === 404) state.config = undefined;
      throw failed(got);
    }
    const bundled = withBundle(got.body, bundle);
    const wanted = withServingCert(bundled ?? got.body, servingCert) ?? bundled;
    if (wanted === undefined) {
      state.config = got.body;
      return;
    }
    const written = await updateWebhookConfig(options.api, wanted);
    if (lostRace(written)) continue;
    if (!written.ok) throw failed(written);
    state.config = written.body;
    if (bundled === undefined) {
      options.log.info({ webhookConfiguration: options.webhookConfig }, 'serving certificate published');
      return;
    }
    options.events?.caBundleRepaired();
    options.log.info(
      { webhookConfiguration: options.webhookConfig, webhooks: wanted.webhooks?.length ?? 0 },
      'caBundle set',
    );
    return;
  }
  throw new Stuck(`the caBundle of ${options.webhookConfig} kept changing under us`);
}

/** One reconciliation: the Secret settled, its certificate served, the caBundle set. */
async function pass(options: ReconcileOptions, state: State): Promise<void> {
  const material = await settleSecret(options);
  if (material.ca.cert !== state.caInUse) {
    options.events?.ca(Date.parse(new X509Certificate(material.ca.cert).validTo));
    state.caInUse = material.ca.cert;
  }
  if (material.serving.cert !== state.served) {
    const pair = keyPairOf(material.serving.cert, material.serving.key);
    options.serve(pair);
    state.served = material.serving.cert;
    options.log.info(
      { secret: whereOf(options), fingerprint: pair.fingerprint, notAfter: pair.notAfter },
      'certificate loaded',
    );
  }
  await settleBundle(options, state, bundleFor(material), material.serving.cert);
}

/** A change of problem logged once: in place, or why not. */
function report(
  options: ReconcileOptions,
  state: State,
  next: string | undefined,
  level: 'warn' | 'error' = 'warn',
) {
  if (next === state.problem) return;
  state.problem = next;
  const { log } = options;
  if (next === undefined)
    log.info(
      { secret: whereOf(options), webhookConfiguration: options.webhookConfig },
      'self-managed TLS in place',
    );
  else log[level]({ code: 'OSM_HC_KUBE', err: next }, 'self-managed TLS not in place');
}

/** Why /readyz answers 503, or undefined. */
function notReady(options: ReconcileOptions, state: State): string | undefined {
  const { served, config, problem } = state;
  if (served === undefined) return `no certificate from ${whereOf(options)} yet: ${problem ?? 'reconciling'}`;
  if (config === undefined)
    return `the caBundle of ${options.webhookConfig} is not known: ${problem ?? 'reconciling'}`;
  return distrust(config, served);
}

export function startReconciler(options: ReconcileOptions): Reconciler {
  const state: State = {
    served: undefined,
    caInUse: undefined,
    config: undefined,
    problem: 'not reconciled yet',
    failures: 0,
  };
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let queue = Promise.resolve();

  /** A pass, then the next one after resyncMs, or sooner with backoff after a failure. */
  const run = async (): Promise<void> => {
    if (closed) return;
    clearTimeout(timer);
    let delay = options.resyncMs;
    try {
      await pass(options, state);
      state.failures = 0;
      report(options, state, undefined);
    } catch (err) {
      state.failures += 1;
      delay = Math.min(options.resyncMs, retryDelay(options.backoff, state.failures));
      report(options, state, (err as Error).message, err instanceof Stuck ? err.level : 'warn');
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
    notReady: () => notReady(options, state),
    resync,
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
