// The webhook's requests to the Kubernetes API server, the way client-go's rest.InClusterConfig talks to it: the
// service account's token as a bearer token (read again at every request), the cluster CA to verify the server.
// Each request is bounded in time and body size; a failure says which request and why. GET /version is here;
// the Secret and MutatingWebhookConfiguration calls are in tls/kube-objects.ts. README.md says why this small
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

export interface KubeAnswer {
  status: number;
  text: string;
}

/**
 * One request within `timeoutMs`; any status is an answer. Throws an Error naming the request when there is no
 * answer: the CA or token unreadable, connection refused, TLS failure, timeout, or an oversized body.
 */
export async function kubeRequest(
  api: KubeApi,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  timeoutMs: number,
  body?: unknown,
): Promise<KubeAnswer> {
  const [ca, tokenText] = await Promise.all([
    readText(api.caFile, 'cluster CA'),
    readText(api.tokenFile, 'service account token'),
  ]);
  const token = tokenText.trim();
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new Error(`the service account token ${api.tokenFile} is not one line of printable characters`);
  }
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
          if (text.length > MAX_BODY) req.destroy(new Error(`an answer over ${MAX_BODY} bytes`));
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
