// A webhook replica with self-managed TLS against the stand-in API server, on its own clock, and the two clients
// the tests judge it with: kubelet's (certificate not verified) and the API server's (trusting only the caBundle).

import { request } from 'node:https';
import { connect } from 'node:tls';
import type { Logger } from '../../../src/log.js';
import { POLICY, type Policy } from '../../../src/webhook/tls/rotation.js';
import { selfManagedTls } from '../../../src/webhook/tls-source.js';
import type { KubeStandin } from '../../helpers/kube-standin.js';
import { type Harness, startHarness } from '../harness.js';

export const NAMESPACE = 'osm-healthcheck';
export const SERVICE = 'osm-healthcheck-webhook';
export const SECRET = 'osm-healthcheck-webhook-tls';
export const CONFIG = 'osm-healthcheck';
export const HOST = `${SERVICE}.${NAMESPACE}.svc`;

/** Short lifetimes on a clock the test moves; 5 minutes of backdating keeps every certificate valid in real time. */
export const TEST_POLICY: Policy = {
  ...POLICY,
  dnsNames: [HOST, `${HOST}.cluster.local`],
  caLifetimeMs: 200_000,
  servingLifetimeMs: 60_000,
  overlapMs: 10_000,
};

export interface Clock {
  now: number;
}

export function startReplica(standin: KubeStandin, clock: Clock, requestTimeoutMs = 2_000): Promise<Harness> {
  return startHarness({
    tls: (log: Logger) =>
      selfManagedTls({
        api: {
          url: standin.url,
          caFile: standin.caFile,
          tokenFile: standin.tokenFile,
          timeoutMs: requestTimeoutMs,
        },
        namespace: NAMESPACE,
        secretName: SECRET,
        webhookConfig: CONFIG,
        policy: TEST_POLICY,
        resyncMs: 100,
        backoff: { firstMs: 20, maxMs: 100 },
        log,
        now: () => clock.now,
      }),
  });
}

/** GET /readyz (or `path`) as kubelet does: HTTPS, certificate not verified. */
export function readyz(port: number, path = '/readyz'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The caBundle of each webhook entry, as PEM. */
export function caBundles(standin: KubeStandin): string[] {
  const config = standin.config(CONFIG);
  return (config?.webhooks ?? []).map((w: { clientConfig: { caBundle?: string } }) =>
    Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString('utf8'),
  );
}

/**
 * A TLS handshake as the API server makes it: only `bundle` trusted, the Service's name checked. Resolves with the
 * served certificate's fingerprint, or rejects with why the handshake failed.
 */
export function trustedHandshake(port: number, bundle: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: HOST, ca: bundle }, () => {
      const { fingerprint256 } = socket.getPeerCertificate();
      socket.end();
      resolve(fingerprint256);
    });
    socket.on('error', reject);
  });
}
