// The one Kubernetes API call the webhook makes: GET /version, the way client-go's rest.InClusterConfig talks
// to the API server (the service account's token as a bearer token, the cluster CA to verify the server). Every
// client may read /version (the system:public-info-viewer ClusterRole), so the webhook needs no RBAC for it.

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
}

/** The API server's address inside a pod, as client-go reads it; undefined outside one. */
export function inClusterUrl(env: NodeJS.ProcessEnv): string | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host === undefined || host === '' || port === undefined || port === '') return undefined;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Enough for /version (a few hundred bytes); a longer answer is no version. */
const MAX_BODY = 64 * 1024;

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the ${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** GET /version within `timeoutMs`; throws an Error that says which step failed and why. */
export async function fetchVersion(api: KubeApi, timeoutMs: number): Promise<KubeVersion> {
  const [ca, tokenText] = await Promise.all([
    readText(api.caFile, 'cluster CA'),
    readText(api.tokenFile, 'service account token'),
  ]);
  const token = tokenText.trim();
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new Error(`the service account token ${api.tokenFile} is not one line of printable characters`);
  }
  const url = new URL('/version', api.url);
  const body = await new Promise<string>((resolve, reject) => {
    const req = request(
      url,
      {
        ca,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        timeout: timeoutMs,
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
          if (res.statusCode === 200) return resolve(text);
          const line = text.split('\n')[0]?.slice(0, 200) ?? '';
          reject(new Error(`GET ${url.href} answered ${res.statusCode}${line === '' ? '' : `: ${line}`}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`GET ${url.href}: ${err.message}`, { cause: err })));
    req.end();
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new Error(`GET ${url.href}: the answer is not JSON: ${(err as Error).message}`, { cause: err });
  }
  try {
    return versionFromApi(parsed);
  } catch (err) {
    throw new Error(`GET ${url.href}: ${(err as Error).message}`, { cause: err });
  }
}
