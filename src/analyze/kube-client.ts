// analyze's way to the cluster: found and authenticated as kubectl does it (KUBECONFIG with several files,
// --kubeconfig, --context, in-cluster; client certificates, tokens, exec credential plugins), which is
// @kubernetes/client-node's KubeConfig's job; the requests themselves are plain HTTPS GETs and one POST whose JSON
// comes back as the API server wrote it (no typed models: a field newer than the library still reaches the rewrite).

import { request as httpsRequest, type RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { briefMessage, HealthcheckError } from '../errors.js';
import { usageError } from '../flags.js';
import type { Json } from './json.js';
import { splitList } from './list-items.js';

export type { Json };

/** What the API server answered: the object, or its refusal (a Status) with the HTTP status. */
export type ApiReply =
  | { ok: true; body: Json; warnings: string[] }
  | { ok: false; status: number; reason: string; message: string };

/**
 * One page of a list: its items, each parsed only when the iteration reaches it (list-items.ts), and the token of
 * the next page; or the refusal. An item that is no JSON throws a SyntaxError from the iteration.
 */
export type ListReply =
  | { ok: true; items: () => Iterable<Json>; continue: string | undefined }
  | { ok: false; status: number; reason: string; message: string };

export interface ClusterClient {
  /** `https://host:port`, for the report. */
  server: string;
  /** The kubeconfig context in use, or `in-cluster`. */
  context: string;
  /** The context's namespace, else `default`: kubectl's namespace without -n. */
  namespace: string;
  get(path: string): Promise<ApiReply>;
  /**
   * A GET of a collection (with its query), one page; with `metadataOnly` each item is only its metadata (a
   * PartialObjectMetadata), as kubectl asks for it, or the whole object from a server that cannot.
   */
  list(path: string, metadataOnly?: boolean): Promise<ListReply>;
  post(path: string, body: Json): Promise<ApiReply>;
  /** A GET of text (a pod's /metrics through the pod proxy); a non-2xx answer is refused with its message. */
  getText(path: string): Promise<{ ok: true; text: string } | { ok: false; message: string }>;
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

/** kubectl's Accept for a list of metadata: the object's metadata alone, else the object. */
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** Answers bigger than this are refused: a page of 500 pods is a few MB; nothing analyze asks for is near it. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;

function loadConfig(options: ConnectOptions): KubeConfig {
  const config = new KubeConfig();
  try {
    if (options.kubeconfig !== undefined) config.loadFromFile(options.kubeconfig);
    else config.loadFromDefault();
  } catch (err) {
    const from = options.kubeconfig ?? process.env.KUBECONFIG ?? '~/.kube/config';
    const problem = `cannot read the kubeconfig ${from}: ${briefMessage((err as Error).message, 200)}`;
    throw usageError(problem, 'a kubeconfig file as kubectl reads it', { cause: err });
  }
  if (options.context !== undefined) {
    if (config.getContextObject(options.context) === null) {
      const known = config.getContexts().map((c) => c.name);
      throw usageError(
        `--context ${JSON.stringify(options.context)}: no such context in the kubeconfig`,
        known.length === 0 ? 'it has none' : known.join(', '),
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
    throw usageError(
      'no cluster to talk to: the kubeconfig has no current context',
      'kubectl config use-context NAME, or --context',
    );
  }
  let base: URL;
  try {
    base = new URL(cluster.server);
  } catch {
    throw usageError(
      `the kubeconfig's cluster "${cluster.name}" has server ${JSON.stringify(cluster.server)}`,
      'an https:// URL',
    );
  }
  const context = config.getCurrentContext() || 'in-cluster';
  const namespace = config.getContextObject(context)?.namespace ?? 'default';
  const send = async (
    method: string,
    path: string,
    body?: Json,
    accept = 'application/json',
  ): Promise<Answer> => {
    const headers: Record<string, string> = { accept };
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
    get: async (path) => replyOf(...(await send('GET', path))),
    list: async (path, metadataOnly) =>
      listReplyOf(...(await send('GET', path, undefined, metadataOnly ? METADATA_LIST : undefined))),
    post: async (path, body) => replyOf(...(await send('POST', path, body))),
    getText: async (path) => {
      const [status, bytes, warning] = await send('GET', path, undefined, 'text/plain, */*');
      if (status >= 200 && status < 300) return { ok: true, text: bytes.toString('utf8') };
      const refusal = replyOf(status, bytes, warning);
      return { ok: false, message: refusal.ok ? `HTTP ${status}` : refusal.message };
    },
  };
}

/** An answer as it came: the HTTP status, the body's bytes, the Warning header. */
type Answer = [status: number, bytes: Buffer, warning: string | string[] | undefined];

/** One request and its whole answer, within `timeoutMs`; a refusal is an answer, no answer at all a ClusterError. */
function exchange(
  url: URL,
  options: RequestOptions,
  body: Json | undefined,
  timeoutMs: number,
): Promise<Answer> {
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
        resolve([res.statusCode ?? 0, Buffer.concat(chunks), res.headers.warning]);
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
export function replyOf(
  status: number,
  body: string | Buffer,
  warning: string | string[] | undefined,
): ApiReply {
  const text = typeof body === 'string' ? body : body.toString('utf8');
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

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A page of a list from a 2xx answer, item by item where its items can be found in the bytes, else parsed whole. */
export function listReplyOf(status: number, bytes: Buffer, warning?: string | string[]): ListReply {
  const split = status >= 200 && status < 300 ? splitList(bytes) : undefined;
  let rest: unknown;
  if (split !== undefined) {
    const [from, to] = split.inside;
    try {
      rest = JSON.parse(`${bytes.toString('utf8', 0, from)}${bytes.toString('utf8', to)}`);
    } catch {
      rest = undefined;
    }
  }
  if (split === undefined || !isObject(rest)) {
    const reply = replyOf(status, bytes, warning);
    if (!reply.ok) return reply;
    const items = Array.isArray(reply.body.items) ? reply.body.items.filter(isObject) : [];
    return { ok: true, items: () => items, continue: continueOf(reply.body) };
  }
  return {
    ok: true,
    items: function* () {
      for (const [start, end] of split.items) {
        const item: unknown = JSON.parse(bytes.toString('utf8', start, end));
        if (isObject(item)) yield item;
      }
    },
    continue: continueOf(rest),
  };
}

/** metadata.continue of a list, when there is a next page. */
function continueOf(list: Json): string | undefined {
  const next = (list.metadata as { continue?: unknown } | undefined)?.continue;
  return typeof next === 'string' && next !== '' ? next : undefined;
}
