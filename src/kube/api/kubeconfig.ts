// analyze's way to the API server: found and authenticated as kubectl does it (KUBECONFIG with several files,
// --kubeconfig, --context, in-cluster; client certificates, tokens, exec credential plugins), which is
// @kubernetes/client-node's KubeConfig's job. Only analyze imports this file: the webhook's bundle stays without
// client-node (test/commands/bundle.test.ts).

import type { RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { briefMessage } from '../../errors.js';
import { usageError } from '../../flags.js';
import type { ApiServer } from './transport.js';

export interface KubeconfigChoice {
  kubeconfig?: string;
  context?: string;
}

export interface KubeconfigServer extends ApiServer {
  /** The kubeconfig context in use, or `in-cluster`. */
  context: string;
  /** The context's namespace, else `default`: kubectl's namespace without -n. */
  namespace: string;
}

function loadConfig(options: KubeconfigChoice): KubeConfig {
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

/** The current context's API server, or a usage error naming what is wrong with the kubeconfig. */
export function kubeconfigServer(options: KubeconfigChoice): KubeconfigServer {
  const config = loadConfig(options);
  const cluster = config.getCurrentCluster();
  if (cluster === null) {
    throw usageError(
      'no cluster to talk to: the kubeconfig has no current context',
      'kubectl config use-context NAME, or --context',
    );
  }
  try {
    new URL(cluster.server);
  } catch {
    throw usageError(
      `the kubeconfig's cluster "${cluster.name}" has server ${JSON.stringify(cluster.server)}`,
      'an https:// URL',
    );
  }
  const context = config.getCurrentContext() || 'in-cluster';
  return {
    url: cluster.server,
    context,
    namespace: config.getContextObject(context)?.namespace ?? 'default',
    async authorise(request: RequestOptions) {
      try {
        // Per request: an exec plugin's or a token file's credential is renewed when it expires.
        await config.applyToHTTPSOptions(request);
      } catch (err) {
        throw new Error(
          `cannot get credentials for context "${context}": ${briefMessage((err as Error).message, 200)}`,
          { cause: err },
        );
      }
    },
  };
}
