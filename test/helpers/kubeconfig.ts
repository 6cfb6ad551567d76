// Kubeconfig files as kubectl writes them, for analyze's tests: a server, its CA (or none: skip verification),
// and a user with a bearer token, or an exec credential plugin (the way EKS, GKE and AKS kubeconfigs authenticate).

import { stringify } from 'yaml';

export type KubeUser =
  | { token: string }
  | { exec: { command: string; args?: string[]; env?: { name: string; value: string }[] } };

/** A kubeconfig with one context, `test`, whose user is `user` (a token, or an exec plugin). */
export function kubeconfigFor(
  server: string,
  user: string | KubeUser,
  caFile?: string,
  namespace?: string,
): string {
  const auth = typeof user === 'string' ? { token: user } : user;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'test',
        cluster: {
          server,
          ...(caFile === undefined
            ? { 'insecure-skip-tls-verify': true }
            : { 'certificate-authority': caFile }),
        },
      },
    ],
    users: [
      {
        name: 'test',
        user:
          'exec' in auth
            ? {
                exec: {
                  apiVersion: 'client.authentication.k8s.io/v1',
                  interactiveMode: 'Never',
                  ...auth.exec,
                },
              }
            : auth,
      },
    ],
    contexts: [
      {
        name: 'test',
        context: { cluster: 'test', user: 'test', ...(namespace === undefined ? {} : { namespace }) },
      },
    ],
    'current-context': 'test',
  });
}
