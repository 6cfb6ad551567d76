// The API server's REST verbs over one transport (transport.ts), each answer read once (reply.ts): what the
// webhook, analyze and the tests call. No typed models: an object comes back as the API server wrote it, so a
// field newer than this code still reaches whoever reads it.

import { type ListPage, pageOf, type Refusal, type Reply, refusalOf, replyOf } from './reply.js';
import { type ApiServer, send } from './transport.js';

export interface ApiClient {
  /** `https://host:port`. */
  server: string;
  get(path: string): Promise<Reply>;
  /**
   * One page of a collection (the path with its query); with `metadataOnly` each item is only its metadata (a
   * PartialObjectMetadata), as kubectl asks for it, or the whole object from a server that cannot.
   */
  list(path: string, metadataOnly?: boolean): Promise<ListPage>;
  post(path: string, body: unknown): Promise<Reply>;
  put(path: string, body: unknown): Promise<Reply>;
  /** A GET of text (a pod's /metrics through the pod proxy), or the refusal. */
  getText(path: string): Promise<{ ok: true; text: string } | Refusal>;
}

export interface ClientOptions {
  /** Every request's deadline. */
  timeoutMs: number;
  /** The longest answer to get, post or put. */
  maxBytes: number;
  /** The longest page of a list; default maxBytes. */
  pageBytes?: number;
}

/** kubectl's Accept for a list of metadata: the object's metadata alone, else the object. */
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

export function apiClient(server: ApiServer, { timeoutMs, maxBytes, pageBytes }: ClientOptions): ApiClient {
  const object = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Reply> => {
    const answer = await send(server, { method, path, body, timeoutMs, maxBytes });
    return replyOf(answer.status, answer.bytes, answer.warnings);
  };
  return {
    server: new URL(server.url).origin,
    get: (path) => object('GET', path),
    post: (path, body) => object('POST', path, body),
    put: (path, body) => object('PUT', path, body),
    async getText(path) {
      const answer = await send(server, {
        method: 'GET',
        path,
        accept: 'text/plain, */*',
        timeoutMs,
        maxBytes,
      });
      const text = answer.bytes.toString('utf8');
      return answer.status >= 200 && answer.status < 300
        ? { ok: true, text }
        : refusalOf(answer.status, text);
    },
    async list(path, metadataOnly) {
      const accept = metadataOnly ? METADATA_LIST : undefined;
      const answer = await send(server, {
        method: 'GET',
        path,
        accept,
        timeoutMs,
        maxBytes: pageBytes ?? maxBytes,
      });
      return pageOf(answer.status, answer.bytes);
    },
  };
}
