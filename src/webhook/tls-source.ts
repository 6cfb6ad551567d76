// Where the webhook's serving certificate comes from: files written by someone else (cert-manager), watched and
// reloaded; or self-managed, kept in a Secret of its own by tls/reconcile.ts. server.ts serves either the same way.

import type { Logger } from '../log.js';
import { type KeyPair, loadKeyPair, watchKeyPair } from './certificate.js';
import { type PublisherOptions, startPublisher } from './tls/published-cert.js';
import { keyPairOf, type ReconcileOptions, startReconciler, type TlsEvents } from './tls/reconcile.js';

export type { TlsEvents } from './tls/reconcile.js';

import { fresh } from './tls/rotation.js';

export interface TlsKeeper {
  /** Why the webhook is not ready for its certificate's sake, or undefined. */
  notReady(): string | undefined;
  close(): void;
}

export interface TlsSource {
  /** The pair the listener starts with. */
  initial: KeyPair;
  /** `initial` is a throwaway served only until the real one is loaded (self-managed). */
  throwaway: boolean;
  /** Keeps the certificate current from now on; `swap` puts a new pair in service for new connections. */
  start(swap: (pair: KeyPair) => void, events?: TlsEvents): Promise<TlsKeeper>;
  /** What the 'webhook serving' log line says about it. */
  describe: Record<string, unknown>;
}

const RELOAD = { debounceMs: 500, pollMs: 10_000 };

/**
 * --tls-cert/--tls-key: read now (a bad pair stops the webhook with OSM_HC_TLS), reloaded when they change; with an
 * API server, the public chain of each pair served is published on the webhook's configuration.
 */
export async function fileTls(
  certFile: string,
  keyFile: string,
  log: Logger,
  reload: { debounceMs: number; pollMs: number } = RELOAD,
  publish?: Omit<PublisherOptions, 'log'>,
): Promise<TlsSource> {
  const initial = await loadKeyPair(certFile, keyFile);
  let current = initial;
  return {
    initial,
    throwaway: false,
    describe: { tls: 'files', fingerprint: initial.fingerprint, notAfter: initial.notAfter },
    async start(swap) {
      const publisher = publish === undefined ? undefined : startPublisher({ ...publish, log });
      publisher?.serve(initial.cert);
      const watcher = await watchKeyPair({
        certFile,
        keyFile,
        current: initial,
        ...reload,
        onReload(next) {
          swap(next);
          current = next;
          publisher?.serve(next.cert);
          log.info({ fingerprint: next.fingerprint, notAfter: next.notAfter }, 'certificate reloaded');
        },
        onError(err) {
          log.error(
            { err: err.message, fingerprint: current.fingerprint },
            'new certificate not loaded; still serving the previous one',
          );
        },
      });
      return {
        notReady: () => undefined,
        close: () => {
          watcher.close();
          publisher?.close();
        },
      };
    },
  };
}

/**
 * Self-managed: until the Secret's certificate is loaded the listener serves a throwaway one (from a CA nobody
 * keeps), so /healthz answers at once; kubelet does not verify probe certificates and /readyz says 503 meanwhile.
 */
export function selfManagedTls(options: Omit<ReconcileOptions, 'serve'>): TlsSource {
  const throwaway = fresh(options.policy, options.now()).serving;
  return {
    initial: keyPairOf(throwaway.cert, throwaway.key),
    throwaway: true,
    describe: {
      tls: 'self-managed',
      secret: `${options.namespace}/${options.secretName}`,
      webhookConfiguration: options.webhookConfig,
    },
    start: async (swap, events) => startReconciler({ ...options, serve: swap, events }),
  };
}
