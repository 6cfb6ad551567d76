// analyze's way to the cluster: found and authenticated as kubectl does it (KUBECONFIG with several files,
// --kubeconfig, --context, in-cluster; client certificates, tokens, exec credential plugins), which is
// @kubernetes/client-node's KubeConfig's job; the requests themselves are plain HTTPS GETs and one POST whose JSON
// comes back as the API server wrote it (no typed models: a field newer than the library still reaches the rewrite).

import { request as httpsRequest, type RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { briefMessage, HealthcheckError, UsageError } from '../errors.js';

export type Json = Record<string, unknown>;

/** What the API server answered: the object, or its refusal (a Status) with the HTTP status. */
export type ApiReply =
  | { ok: true; body: Json; warnings: string[] }
  | { ok: false; status: number; reason: string; message: string };

export interface ClusterClient {
  /** `https://host:port`, for the report. */
  server: string;
  /** The kubeconfig context in use, or `in-cluster`. */
  context: string;
  /** The context's namespace, else `default`: kubectl's namespace without -n. */
  namespace: string;
  get(path: string): Promise<ApiReply>;
  post(path: string, body: Json): Promise<ApiReply>;
}

export interface ConnectOptions {
  kubeconfig?: string;
  context?: string;
  /** Every request's deadline. */
  timeoutMs: number;
}

/** The API server could not be reached or spoken to at all: analyze's exit 3. */
export class ClusterError extends HealthcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('OSM_HC_CLUSTER', message, options);
    this.name = 'ClusterError';
  }
}

/** Answers bigger than this are refused: a page of 500 pods is a few MB; nothing analyze asks for is near it. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;

function loadConfig(options: ConnectOptions): KubeConfig {
  const config = new KubeConfig();
  try {
    if (options.kubeconfig !== undefined) config.loadFromFile(options.kubeconfig);
    else config.loadFromDefault();
  } catch (err) {
    const from = options.kubeconfig ?? process.env.KUBECONFIG ?? '~/.kube/config';
    throw new UsageError(`cannot read the kubeconfig ${from}: ${briefMessage((err as Error).message, 200)}`, {
      cause: err,
    });
  }
  if (options.context !== undefined) {
    if (config.getContextObject(options.context) === null) {
      const known = config.getContexts().map((c) => c.name);
      throw new UsageError(
        `--context ${JSON.stringify(options.context)}: no such context in the kubeconfig (${known.length === 0 ? 'it has none' : known.join(', ')})`,
      );
    }
    config.setCurrentContext(options.context);
  }
  return config;
}

export function connect(options: ConnectOptions): ClusterClient {
  const config = loadConfig(options);
  const cluster = config.getCurrentCluster();
  if (cluster === null) {
    throw new UsageError(
      'no cluster to talk to: the kubeconfig has no current context (kubectl config use-context NAME, or --context)',
    );
  }
  let base: URL;
  try {
    base = new URL(cluster.server);
  } catch {
    throw new UsageError(
      `the kubeconfig's cluster "${cluster.name}" has server ${JSON.stringify(cluster.server)}, no URL`,
    );
  }
  const context = config.getCurrentContext() || 'in-cluster';
  const namespace = config.getContextObject(context)?.namespace ?? 'default';
  const send = async (method: string, path: string, body?: Json): Promise<ApiReply> => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const request: RequestOptions = { method, headers };
    try {
      // Per request: an exec plugin's or a token file's credential is renewed when it expires.
      await config.applyToHTTPSOptions(request);
    } catch (err) {
      throw new ClusterError(
        `cannot get credentials for context "${context}": ${briefMessage((err as Error).message, 200)}`,
        { cause: err },
      );
    }
    return exchange(new URL(path, base), request, body, options.timeoutMs);
  };
  return {
    server: base.origin,
    context,
    namespace,
    get: (path) => send('GET', path),
    post: (path, body) => send('POST', path, body),
  };
}

/** One request and its whole answer, within `timeoutMs`; a refusal is a reply, no answer at all a ClusterError. */
function exchange(
  url: URL,
  options: RequestOptions,
  body: Json | undefined,
  timeoutMs: number,
): Promise<ApiReply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) req.destroy(new Error(`an answer larger than ${MAX_BODY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve(replyOf(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), res.headers.warning));
      });
      res.on('error', fail);
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    function fail(err: Error) {
      clearTimeout(timer);
      reject(
        new ClusterError(
          `cannot reach the API server ${url.origin} (${url.pathname}): ${briefMessage(err.message, 200)}`,
          { cause: err },
        ),
      );
    }
    req.on('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The object of a 2xx answer, or the Status the API server refused with. */
export function replyOf(status: number, text: string, warning: string | string[] | undefined): ApiReply {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const object =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : undefined;
  if (status >= 200 && status < 300 && object !== undefined) {
    return { ok: true, body: object, warnings: warningsOf(warning) };
  }
  return {
    ok: false,
    status,
    reason: typeof object?.reason === 'string' ? object.reason : `HTTP ${status}`,
    message:
      typeof object?.message === 'string'
        ? object.message
        : briefMessage(text === '' ? `HTTP ${status}` : text, 200),
  };
}

/** The warn-text of each `299 - "text"` the API server sent (admission webhooks' warnings among them). */
export function warningsOf(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(', ') : header;
  return [...text.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) =>
    (m[1] ?? '').replaceAll(/\\(.)/g, '$1'),
  );
}
