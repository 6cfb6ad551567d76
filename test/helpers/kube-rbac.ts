// The stand-in API server's authoriser: the webhook's RBAC as deploy/webhook grants it (Role: create secrets, and
// get/update/watch its own Secret by resourceNames; ClusterRole: get/update/patch its own
// MutatingWebhookConfiguration), answered as the real RBAC authoriser does, Status shape and message included.

import type { ServerResponse } from 'node:http';

export type Verb = 'get' | 'create' | 'update' | 'patch';

export interface Rbac {
  namespace: string;
  secretName: string;
  webhookConfig: string;
  /** Grants taken away, e.g. 'update secrets' or 'get mutatingwebhookconfigurations'. */
  denied: Set<string>;
}

/** The 403 message when `verb` is not allowed (resourceNames cannot restrict create), else undefined. */
export function forbidden(
  policy: Rbac,
  user: string,
  verb: Verb,
  resource: 'secrets' | 'mutatingwebhookconfigurations',
  name: string | undefined,
  namespace?: string,
): string | undefined {
  const allowed =
    !policy.denied.has(`${verb} ${resource}`) &&
    (resource === 'secrets'
      ? namespace === policy.namespace &&
        (verb === 'create' || (verb !== 'patch' && name === policy.secretName))
      : verb !== 'create' && name === policy.webhookConfig);
  if (allowed) return undefined;
  const group = resource === 'secrets' ? '' : 'admissionregistration.k8s.io';
  const what =
    resource === 'secrets' ? 'secrets' : 'mutatingwebhookconfigurations.admissionregistration.k8s.io';
  const scope = namespace === undefined ? 'at the cluster scope' : `in the namespace "${namespace}"`;
  const named = name === undefined ? '' : ` "${name}"`;
  return `${what}${named} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${group}" ${scope}`;
}

/** A metav1.Status failure, as the API server writes one. */
export function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      code,
    }),
  );
}
