// The running webhook: binds the HTTPS app with the certificate its TLS source gives (files or self-managed), and
// swaps in a new one through the TLS server's setSecureContext, so new connections get it and open ones keep theirs.

import { HealthcheckError } from '../errors.js';
import type { KubeVersion } from '../kube-version.js';
import type { Logger } from '../log.js';
import { choosePlacement } from '../rewrite/placement.js';
import { buildWebhookApp, type WebhookApp } from './app.js';
import type { KeyPair } from './certificate.js';
import { type Backoff, learnClusterVersion } from './cluster-version.js';
import type { TlsKeeper, TlsSource } from './tls-source.js';

export interface WebhookOptions {
  tls: TlsSource;
  port: number;
  /** Bind address; default `::` (dual stack), or 0.0.0.0 where IPv6 is off. */
  host?: string | undefined;
  /** Image of the companion and init container it adds. */
  image: string;
  /**
   * --native-sidecar: the companion as a native sidecar where the cluster has them, learnt from the API server.
   * Absent: always first among the containers, with its postStart hook.
   */
  nativeSidecar?: { sidecarGate: boolean; fetchVersion: () => Promise<KubeVersion>; backoff?: Backoff };
  log: Logger;
}

export interface RunningWebhook {
  port: number;
  /** The certificate being served now. */
  keyPair(): KeyPair;
  /** /readyz turns 503, then in-flight admissions finish and the listener closes. */
  close(): Promise<void>;
}

export async function startWebhook(options: WebhookOptions): Promise<RunningWebhook> {
  const { log } = options;
  let pair = options.tls.initial;
  let keeper: TlsKeeper | undefined;
  let listening = false;
  let draining = false;
  const { nativeSidecar } = options;
  // Asked for while the webhook starts, never awaited: admissions go on meanwhile, the companion placed first.
  const cluster =
    nativeSidecar === undefined
      ? undefined
      : learnClusterVersion({
          fetch: nativeSidecar.fetchVersion,
          sidecarGate: nativeSidecar.sidecarGate,
          log,
          ...(nativeSidecar.backoff === undefined ? {} : { backoff: nativeSidecar.backoff }),
        });
  const app = buildWebhookApp({
    tls: pair,
    image: options.image,
    placement: () =>
      cluster === undefined
        ? choosePlacement(false, { state: 'unchecked' })
        : choosePlacement(true, cluster.knowledge()),
    log,
    notReady: () =>
      !listening || keeper === undefined ? 'starting' : draining ? 'draining' : keeper.notReady(),
  });
  const port = await listen(app, options.port, options.host).catch(async (err) => {
    cluster?.close();
    await app.close();
    throw new HealthcheckError('OSM_HC_LISTEN', `cannot listen on port ${options.port}: ${err.message}`, {
      cause: err,
    });
  });
  listening = true;
  keeper = await options.tls.start((next) => {
    app.server.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' });
    pair = next;
  });
  log.info(
    {
      port,
      ...options.tls.describe,
      image: options.image,
      nativeSidecar: nativeSidecar !== undefined,
      ...(nativeSidecar === undefined ? {} : { sidecarContainersGate: nativeSidecar.sidecarGate }),
    },
    'webhook serving',
  );
  return {
    port,
    keyPair: () => pair,
    async close() {
      draining = true;
      keeper?.close();
      cluster?.close();
      await app.close();
    },
  };
}

async function listen(app: WebhookApp, port: number, host: string | undefined): Promise<number> {
  const attempt = async (h: string) => {
    await app.listen({ port, host: h, ipv6Only: false });
    const address = app.server.address();
    return typeof address === 'object' && address !== null ? address.port : port;
  };
  if (host !== undefined) return attempt(host);
  try {
    return await attempt('::');
  } catch (err) {
    const { code } = err as NodeJS.ErrnoException;
    if (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL') throw err;
    return attempt('0.0.0.0');
  }
}
