// Starts the real webhook (HTTPS on an ephemeral loopback port, a throwaway certificate) with its logs captured,
// and talks to it as the API server does: POST /mutate over verified TLS.

import { request } from 'node:https';
import { Writable } from 'node:stream';
import { connect } from 'node:tls';
import { createLogger, type Logger } from '../../src/log.js';
import { DEFAULT_IMAGE } from '../../src/rewrite/companion.js';
import type { PlacementMode } from '../../src/rewrite/placement.js';
import type { RewriteOptions } from '../../src/rewrite/types.js';
import { type RunningWebhook, startWebhook, type WebhookOptions } from '../../src/webhook/server.js';
import { fileTls, type TlsSource } from '../../src/webhook/tls-source.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';

/** What the webhook rewrites with when it has no API server to ask (the harness gives it none by default). */
export const REWRITE: RewriteOptions = {
  image: DEFAULT_IMAGE,
  placement: 'auto',
  cluster: { state: 'unknown', why: 'no API server to ask' },
};

export interface Answer {
  status: number;
  contentType: string | undefined;
  body: string;
}

export interface Harness {
  webhook: RunningWebhook;
  cert: TestCert;
  logs: Array<Record<string, unknown>>;
  /** POSTs `body` (a string as is, anything else as JSON) to `path`. */
  post(body: unknown, path?: string, contentType?: string): Promise<Answer>;
  get(path: string): Promise<Answer>;
  /** The value of each series of the webhook's /metrics (`name{labels}` -> value). */
  metrics(): Promise<Map<string, number>>;
  /** SHA-256 fingerprint of the certificate a new TLS connection is served. */
  servedFingerprint(): Promise<string>;
  /** Resolves with the first log line (already written or still to come) that matches. */
  logLine(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** --placement; default auto. */
  placement?: PlacementMode;
  /** Where the version comes from; absent: never known. */
  clusterVersion?: WebhookOptions['clusterVersion'];
  /** Certificate files to serve; default a fresh test certificate. */
  cert?: TestCert;
  /** On close, how long open connections get (WebhookOptions.drainMs). */
  drainMs?: number;
  /** Pod Security: the default level (WebhookOptions). */
  podSecurity?: WebhookOptions['podSecurity'];
  /** The API server whose namespaces, LimitRanges, ResourceQuotas and nodes are watched (WebhookOptions). */
  kube?: WebhookOptions['kube'];
  /** --companion-cpu-limit, canonical. */
  companionCpuLimit?: string;
  /** Another TLS source (self-managed), given the harness's logger; `cert` is then only the client's CA. */
  tls?: (log: Logger) => TlsSource | Promise<TlsSource>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const cert = options.cert ?? makeTestCert();
  const logs: Array<Record<string, unknown>> = [];
  const waiters = new Set<{
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: unknown) => void;
  }>();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const text of String(chunk).split('\n')) {
        if (text === '') continue;
        const line = JSON.parse(text) as Record<string, unknown>;
        logs.push(line);
        for (const waiter of waiters) {
          if (!waiter.match(line)) continue;
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
      done();
    },
  });
  const log = createLogger('debug', sink);
  const webhook = await startWebhook({
    tls:
      (await options.tls?.(log)) ??
      (await fileTls(cert.certFile, cert.keyFile, log, { debounceMs: 50, pollMs: 250 })),
    port: 0,
    host: '127.0.0.1',
    metrics: { port: 0, timeoutSeconds: 5, version: '0.0.0-test' },
    image: REWRITE.image,
    ...(options.placement === undefined ? {} : { placement: options.placement }),
    ...(options.clusterVersion === undefined ? {} : { clusterVersion: options.clusterVersion }),
    ...(options.drainMs === undefined ? {} : { drainMs: options.drainMs }),
    ...(options.podSecurity === undefined ? {} : { podSecurity: options.podSecurity }),
    ...(options.kube === undefined ? {} : { kube: options.kube }),
    ...(options.companionCpuLimit === undefined ? {} : { companionCpuLimit: options.companionCpuLimit }),
    log,
  });
  const send = (method: string, path: string, body?: string, contentType = 'application/json') =>
    new Promise<Answer>((resolve, reject) => {
      const headers = body === undefined ? {} : { 'content-type': contentType };
      const req = request(
        { host: '127.0.0.1', port: webhook.port, path, method, headers, ca: cert.cert, agent: false },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: text }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return {
    webhook,
    cert,
    logs,
    post: (body, path = '/mutate', contentType = 'application/json') =>
      send('POST', path, typeof body === 'string' ? body : JSON.stringify(body), contentType),
    get: (path) => send('GET', path),
    metrics: async () => {
      const text = await (await fetch(`http://127.0.0.1:${webhook.metricsPort}/metrics`)).text();
      return new Map(
        text
          .split('\n')
          .filter((line) => line !== '' && !line.startsWith('#'))
          .map((line) => [
            line.slice(0, line.lastIndexOf(' ')),
            Number(line.slice(line.lastIndexOf(' ') + 1)),
          ]),
      );
    },
    servedFingerprint: () =>
      new Promise((resolve, reject) => {
        // Not verified: after a rotation the served certificate is one this client has never seen.
        const socket = connect({ host: '127.0.0.1', port: webhook.port, rejectUnauthorized: false }, () => {
          const { fingerprint256 } = socket.getPeerCertificate();
          socket.end();
          resolve(fingerprint256);
        });
        socket.on('error', reject);
      }),
    logLine: (match) => {
      const found = logs.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.add({ match, resolve: resolve as (l: unknown) => void }));
    },
    close: async () => {
      await webhook.close();
      cert.cleanup();
    },
  };
}

/** The collections the webhook lists when it has an API server (server.ts), by their `listed` log lines. */
export const WATCHED = ['namespaces', 'limitranges', 'resourcequotas', 'nodes'] as const;

/** Resolves once the webhook has listed every collection it watches. */
export async function allListed(harness: Harness): Promise<void> {
  await Promise.all(WATCHED.map((resource) => harness.logLine((l) => l.msg === `${resource} listed`)));
}
