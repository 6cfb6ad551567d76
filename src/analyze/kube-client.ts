// analyze's client of the API server: the kubeconfig's (src/kube/api/kubeconfig.ts), with no answer at all made a
// ClusterError (exit 3); a refusal is a value (src/kube/api/reply.ts).

import { briefMessage, HealthcheckError } from '../errors.js';
import { type ApiClient, apiClient } from '../kube/api/client.js';
import { kubeconfigServer } from '../kube/api/kubeconfig.js';
import { NoAnswer } from '../kube/api/transport.js';
import type { Json } from './json.js';

export type { Json };

export interface ClusterClient extends Omit<ApiClient, 'put'> {
  /** The kubeconfig context in use, or `in-cluster`. */
  context: string;
  /** The context's namespace, else `default`: kubectl's namespace without -n. */
  namespace: string;
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

/** What a request that got no answer throws, as analyze reports it. */
function clusterError(err: unknown): never {
  if (err instanceof NoAnswer) {
    const { origin, pathname } = err.url;
    throw new ClusterError(
      `cannot reach the API server ${origin} (${pathname}): ${briefMessage(err.reason, 200)}`,
      { cause: err },
    );
  }
  throw new ClusterError((err as Error).message, { cause: err });
}

export function connect(options: ConnectOptions): ClusterClient {
  const server = kubeconfigServer(options);
  const client = apiClient(server, { timeoutMs: options.timeoutMs, maxBytes: MAX_BODY_BYTES });
  return {
    server: client.server,
    context: server.context,
    namespace: server.namespace,
    get: (path) => client.get(path).catch(clusterError),
    list: (path, metadataOnly) => client.list(path, metadataOnly).catch(clusterError),
    post: (path, body) => client.post(path, body).catch(clusterError),
    getText: (path) => client.getText(path).catch(clusterError),
  };
}
