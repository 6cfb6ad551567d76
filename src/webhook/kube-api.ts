// The webhook's requests to the Kubernetes API server, the way client-go's rest.InClusterConfig talks to it: the
// service account's token as a bearer token (read again at every request), the cluster CA to verify the server.
// Each request is bounded in time and body size; a failure says which request and why. GET /version is here;
// the Secret and MutatingWebhookConfiguration calls are in tls/kube-objects.ts; a watch streams (kubeWatch). docs/webhook.md says why this small
// client and not @kubernetes/client-node.

import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { type KubeVersion, versionFromApi } from '../kube-version.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeApi {
  /** https://host:port of the API server. */
  url: string;
  /** PEM bundle the API server's certificate must chain to. */
  caFile: string;
  /** Read again on every call: projected service account tokens are rotated by kubelet. */
  tokenFile: string;
  /** Bound of one object request (tls/kube-objects.ts); default 10 s. */
  timeoutMs?: number;
}

/** The API server's address inside a pod, as client-go reads it; undefined outside one. */
export function inClusterUrl(env: NodeJS.ProcessEnv): string | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host === undefined || host === '' || port === undefined || port === '') return undefined;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Larger than any Secret or MutatingWebhookConfiguration the webhook reads; a longer answer is refused. */
const MAX_BODY = 1024 * 1024;

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the ${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** The cluster CA and the bearer token, read again for every request. */
async function credentials(api: KubeApi): Promise<{ ca: string; token: string }> {
  const [ca, tokenText] = await Promise.all([
    readText(api.caFile, 'cluster CA'),
    readText(api.tokenFile, 'service account token'),
  ]);
  const token = tokenText.trim();
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new Error(`the service account token ${api.tokenFile} is not one line of printable characters`);
  }
  return { ca, token };
}

export interface KubeAnswer {
  status: number;
  text: string;
}

/**
 * One request within `timeoutMs`; any status is an answer. Throws an Error naming the request when there is no
 * answer: the CA or token unreadable, connection refused, TLS failure, timeout, or a body over `maxBytes`
 * (default MAX_BODY; a page of a list is larger: reflector.ts).
 */
export async function kubeRequest(
  api: KubeApi,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  timeoutMs: number,
  body?: unknown,
  maxBytes = MAX_BODY,
): Promise<KubeAnswer> {
  const { ca, token } = await credentials(api);
  const url = new URL(path, api.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<KubeAnswer>((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (text.length > maxBytes) req.destroy(new Error(`an answer over ${maxBytes} bytes`));
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, text });
        });
        res.on('error', reject);
      },
    );
    // The whole exchange, not only the idle time between packets: an answer trickling in is no answer.
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${method} ${url.href}: ${err.message}`, { cause: err }));
    });
    req.end(payload);
  });
}

/** GET /version within `timeoutMs`; throws an Error that says which step failed and why. */
export async function fetchVersion(api: KubeApi, timeoutMs: number): Promise<KubeVersion> {
  const url = new URL('/version', api.url);
  const answer = await kubeRequest(api, 'GET', '/version', timeoutMs);
  if (answer.status !== 200) {
    const line = answer.text.split('\n')[0]?.slice(0, 200) ?? '';
    throw new Error(`GET ${url.href} answered ${answer.status}${line === '' ? '' : `: ${line}`}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch (err) {
    throw new Error(`GET ${url.href}: the answer is not JSON: ${(err as Error).message}`, { cause: err });
  }
  try {
    return versionFromApi(parsed);
  } catch (err) {
    throw new Error(`GET ${url.href}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * A watch (`?watch=1`): each line of the streamed answer to `onLine` as it arrives. Resolves when the answer ends:
 * status 200 when the API server closed the stream (its timeoutSeconds), any other status with its body. Rejects,
 * naming the request, on a connection or TLS failure, a line over MAX_BODY, nothing at all within `idleMs`, or
 * `signal` (close).
 */
export async function kubeWatch(
  api: KubeApi,
  path: string,
  idleMs: number,
  onLine: (line: string) => void,
  signal: AbortSignal,
): Promise<KubeAnswer> {
  const { ca, token } = await credentials(api);
  const url = new URL(path, api.url);
  // Closed while the credentials were read: an abort listener added now would never fire, and the watch would
  // keep the process alive until its idle timeout.
  if (signal.aborted) throw new Error(`GET ${url.href}: closed`);
  return new Promise<KubeAnswer>((resolve, reject) => {
    const fail = (err: Error) => reject(new Error(`GET ${url.href}: ${err.message}`, { cause: err }));
    const req = request(
      url,
      {
        method: 'GET',
        ca,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        agent: false,
      },
      (res) => {
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          idle.refresh();
          pending += chunk;
          if (pending.length > MAX_BODY) {
            req.destroy(new Error(`a watch event over ${MAX_BODY} bytes`));
            return;
          }
          if (res.statusCode !== 200) return;
          let newline = pending.indexOf('\n');
          while (newline >= 0) {
            const line = pending.slice(0, newline).trim();
            pending = pending.slice(newline + 1);
            if (line !== '') onLine(line);
            newline = pending.indexOf('\n');
          }
        });
        res.on('end', () => {
          clearTimeout(idle);
          if (res.statusCode === 200 && pending.trim() !== '') onLine(pending.trim());
          resolve({ status: res.statusCode ?? 0, text: res.statusCode === 200 ? '' : pending });
        });
        res.on('error', fail);
      },
    );
    // An answer that stops moving (a half-open connection) is no watch: the API server closes a quiet one at its
    // timeoutSeconds, and sends bookmarks meanwhile.
    const idle = setTimeout(() => req.destroy(new Error(`nothing within ${idleMs} ms`)), idleMs);
    const abort = () => req.destroy(new Error('closed'));
    signal.addEventListener('abort', abort, { once: true });
    req.on('close', () => signal.removeEventListener('abort', abort));
    req.on('error', (err) => {
      clearTimeout(idle);
      fail(err);
    });
    req.end();
  });
}
