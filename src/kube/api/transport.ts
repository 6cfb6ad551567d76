// One request to the Kubernetes API server, for the webhook, analyze and the tests alike: bounded in time (the
// whole exchange, not the idle time between packets: an answer trickling in is no answer) and in body size. The
// only part that differs between them is how a request is authorised: the pod's service account
// (service-account.ts) or a kubeconfig (kubeconfig.ts).

import { type RequestOptions, request } from 'node:https';
import { warningsOf } from './reply.js';

/** Adds the credentials (CA, bearer token, client certificate) to a request: called again for every request. */
export type Authorise = (options: RequestOptions) => Promise<void>;

export interface ApiServer {
  /** https://host:port */
  url: string;
  authorise: Authorise;
}

/** The verbs some caller uses: the webhook and analyze read, create and replace; the tests also delete. */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Exchange {
  method: Method;
  /** The path and query. */
  path: string;
  body?: unknown;
  accept?: string;
  timeoutMs: number;
  /** A longer answer is no answer. */
  maxBytes: number;
}

/** What the API server answered, whatever the status: the body's bytes and its Warning headers' texts. */
export interface Answer {
  status: number;
  bytes: Buffer;
  warnings: string[];
}

/** No answer at all: refused, reset, TLS, a timeout, an answer too long. Names the request and the reason. */
export class NoAnswer extends Error {
  constructor(
    readonly url: URL,
    readonly reason: string,
    method: string,
    options?: { cause?: unknown },
  ) {
    super(`${method} ${url.href}: ${reason}`, options);
    this.name = 'NoAnswer';
  }
}

/** The request's options, authorised; what `authorise` throws (a credential unreadable) is thrown as it is. */
export async function requestOptions(
  server: ApiServer,
  method: string,
  accept: string,
  hasBody: boolean,
): Promise<RequestOptions> {
  const options: RequestOptions = {
    method,
    headers: { accept, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
  };
  await server.authorise(options);
  return options;
}

/** One request and its whole answer within `timeoutMs`; any status is an answer, no answer a NoAnswer. */
export async function send(server: ApiServer, exchange: Exchange): Promise<Answer> {
  const { method, timeoutMs, maxBytes } = exchange;
  const url = new URL(exchange.path, server.url);
  const payload = exchange.body === undefined ? undefined : JSON.stringify(exchange.body);
  const options = await requestOptions(
    server,
    method,
    exchange.accept ?? 'application/json',
    payload !== undefined,
  );
  return new Promise<Answer>((resolve, reject) => {
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) req.destroy(new Error(`an answer over ${maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          bytes: Buffer.concat(chunks),
          warnings: warningsOf(res.headers.warning),
        });
      });
      res.on('error', fail);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    function fail(err: Error) {
      clearTimeout(timer);
      reject(new NoAnswer(url, err.message, method, { cause: err }));
    }
    req.on('error', fail);
    req.end(payload);
  });
}
