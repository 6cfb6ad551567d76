// The webhook's way to the API server, the way client-go's rest.InClusterConfig goes: the service account's token
// as a bearer token (read again at every request: kubelet rotates projected tokens), the cluster CA to verify the
// server. Plain files and node:https, so the webhook's bundle carries no client-node (docs/webhook.md).

import { readFile } from 'node:fs/promises';
import { type ApiClient, apiClient } from './client.js';
import type { ApiServer } from './transport.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeApi {
  /** https://host:port of the API server. */
  url: string;
  /** PEM bundle the API server's certificate must chain to. */
  caFile: string;
  /** Read again on every call: projected service account tokens are rotated by kubelet. */
  tokenFile: string;
  /** Bound of one object request (self-managed TLS); default 10 s. */
  timeoutMs?: number;
}

/** The API server's address inside a pod, as client-go reads it; undefined outside one. */
export function inClusterUrl(env: NodeJS.ProcessEnv): string | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host === undefined || host === '' || port === undefined || port === '') return undefined;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the ${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** The API server at `api.url`, each request with the CA and the token as they are on disk now. */
export function serviceAccount(api: KubeApi): ApiServer {
  return {
    url: api.url,
    async authorise(options) {
      const [ca, tokenText] = await Promise.all([
        readText(api.caFile, 'cluster CA'),
        readText(api.tokenFile, 'service account token'),
      ]);
      const token = tokenText.trim();
      if (!/^[\x21-\x7e]+$/.test(token)) {
        throw new Error(`the service account token ${api.tokenFile} is not one line of printable characters`);
      }
      options.ca = ca;
      // No pooled socket: the CA read now is the one that verifies, and nothing keeps the process alive.
      options.agent = false;
      options.headers = { ...options.headers, authorization: `Bearer ${token}` };
    },
  };
}

/** Larger than any Secret or MutatingWebhookConfiguration the webhook reads; a longer answer is refused. */
const MAX_OBJECT = 1024 * 1024;
/** A page of 50 nodes of 80 KB (many images, many volumes) fits; the page is dropped once read. */
const MAX_PAGE = 8 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

/** The webhook's client: objects up to MAX_OBJECT, list pages up to MAX_PAGE, each request within its bound. */
export function inClusterClient(api: KubeApi, timeoutMs = api.timeoutMs ?? TIMEOUT_MS): ApiClient {
  return apiClient(serviceAccount(api), { timeoutMs, maxBytes: MAX_OBJECT, pageBytes: MAX_PAGE });
}
