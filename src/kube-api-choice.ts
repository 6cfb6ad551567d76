// Which API server a long-running command (the webhook, the node agent) talks to, from its flags: --kube-api, else
// the in-cluster address Kubernetes puts in a pod's environment, with the service account's CA and token unless
// --kube-ca and --kube-token-file name others. Pure: a bad value is a UsageError naming the flag it came from.

import { join } from 'node:path';
import { describeValue } from './errors.js';
import { badFlagValue, usageError } from './flags.js';
import { inClusterUrl, type KubeApi, SERVICE_ACCOUNT_DIR } from './kube/api/in-cluster.js';

/** A flag's text and where it came from (`--kube-api` or `env OSM_HEALTHCHECK_KUBE_API`). */
export interface GivenText {
  text: string;
  from: string;
}

export type KubeApiFlag = 'kube-api' | 'kube-ca' | 'kube-token-file';

/** The environment variables that stand for the flags, the same for every command. */
export const KUBE_API_ENV: Readonly<Record<KubeApiFlag, string>> = {
  'kube-api': 'OSM_HEALTHCHECK_KUBE_API',
  'kube-ca': 'OSM_HEALTHCHECK_KUBE_CA',
  'kube-token-file': 'OSM_HEALTHCHECK_KUBE_TOKEN_FILE',
};

/** --kube-api, else the in-cluster address; an API server spoken to without TLS would be anyone's. */
export function kubeApiChoice(
  args: (flag: KubeApiFlag) => GivenText | undefined,
  env: NodeJS.ProcessEnv,
): KubeApi | undefined {
  const given = args('kube-api');
  const text = given?.text ?? inClusterUrl(env);
  if (text === undefined) return undefined;
  const from = given?.from ?? '--kube-api';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    if (given === undefined) {
      throw usageError(
        `env KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT make ${describeValue(text)}, no URL`,
        "the API server's host and port, as Kubernetes sets them in a pod",
      );
    }
    throw badFlagValue(from, text, 'an https:// URL');
  }
  if (url.protocol !== 'https:') throw badFlagValue(from, text, 'an https:// URL');
  return {
    url: url.origin,
    caFile: args('kube-ca')?.text ?? join(SERVICE_ACCOUNT_DIR, 'ca.crt'),
    tokenFile: args('kube-token-file')?.text ?? join(SERVICE_ACCOUNT_DIR, 'token'),
  };
}
