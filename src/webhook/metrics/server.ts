// The webhook's /metrics in plain HTTP on a port of its own (--metrics-port), apart from the HTTPS port the API
// server calls: Prometheus scrapes it without the webhook's CA, and a slow scrape never holds an admission up.
// The exposition (and prom-client with it) is imported on the first scrape; a failed import is tried again.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOn } from '../../listen-address.js';
import type { Logger } from '../../log.js';
import type { Exposition } from './exposition.js';
import type { WebhookRecorder } from './recorder.js';

export const METRICS_PATH = '/metrics';

export interface MetricsServerOptions {
  port: number;
  /** Bind address; default `::` (dual stack), or 0.0.0.0 where IPv6 is off. */
  host?: string | undefined;
  recorder: WebhookRecorder;
  /** The webhook's version, for build_info. */
  version: string;
  log: Logger;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

const plain = (res: ServerResponse, status: number, line: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(`${line}\n`);
};

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { recorder, version, log } = options;
  let loading: Promise<Exposition> | undefined;
  const exposition = () => {
    loading ??= import('./exposition.js').then(
      ({ createWebhookExposition }) => createWebhookExposition(recorder, version),
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?', 1)[0];
    if (path !== METRICS_PATH) return plain(res, 404, `no such path; paths: ${METRICS_PATH}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return plain(res, 405, `method ${req.method} not allowed`, { allow: 'GET, HEAD' });
    }
    try {
      const exposed = await exposition();
      const text = await exposed.metrics();
      res
        .writeHead(200, { 'content-type': exposed.contentType })
        .end(req.method === 'HEAD' ? undefined : text);
    } catch (err) {
      log.error({ err }, 'metrics failed');
      const [line] = (err instanceof Error ? err.message : String(err)).split('\n', 1);
      plain(res, 500, `metrics: ${line}`);
    }
  };

  const server = createServer(
    { maxHeaderSize: 16 * 1024, requestTimeout: 10_000, headersTimeout: 5_000 },
    (req, res) => {
      // No body is read: a scrape sends none, and whatever else comes is dropped with the connection.
      req.resume();
      void handle(req, res);
    },
  );
  const port = await listenOn(server, options.port, options.host);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
