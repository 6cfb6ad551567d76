// GET /version: the API server's Kubernetes version, or an Error that says which step failed and why.

import { type KubeVersion, versionFromApi } from '../../kube-version.js';
import type { ApiClient } from './client.js';

export async function fetchVersion(client: ApiClient): Promise<KubeVersion> {
  const url = new URL('/version', client.server);
  const reply = await client.get('/version');
  if (!reply.ok) throw new Error(`GET ${url.href} answered ${reply.status}: ${reply.message}`);
  try {
    return versionFromApi(reply.body);
  } catch (err) {
    throw new Error(`GET ${url.href}: ${(err as Error).message}`, { cause: err });
  }
}
