// The stand-in API server's authoriser: the rules deploy/webhook/rbac.yaml grants (its Role in the Role's namespace,
// its ClusterRole everywhere), evaluated as the real RBAC authoriser does, and answered with its Status message. So
// the webhook's tests fail when the code needs a verb the manifest does not grant.

import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { parseAllDocuments } from 'yaml';
import type { WatchedResource } from './kube-objects.js';

export type Verb = 'get' | 'create' | 'update' | 'patch' | 'list' | 'watch' | 'delete';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** A Role's rules hold in its namespace only; a ClusterRole's everywhere. */
interface Grant {
  namespace: string | undefined;
  rule: Rule;
}

const RBAC_FILE = new URL('../../deploy/webhook/rbac.yaml', import.meta.url);

/** The grants of deploy/webhook/rbac.yaml, as the cluster would hold them. */
export function manifestGrants(file: URL = RBAC_FILE): Grant[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).flatMap((doc) => {
    const object = doc.toJS() as { kind: string; metadata: { namespace?: string }; rules?: Rule[] };
    if (object.kind !== 'Role' && object.kind !== 'ClusterRole') return [];
    const namespace = object.kind === 'Role' ? object.metadata.namespace : undefined;
    return (object.rules ?? []).map((rule) => ({ namespace, rule }));
  });
}

export interface Rbac {
  namespace: string;
  secretName: string;
  webhookConfig: string;
  /** Grants taken away, e.g. 'update secrets' or 'get mutatingwebhookconfigurations'. */
  denied: Set<string>;
}

const GRANTS = manifestGrants();

/**
 * plugin/pkg/auth/authorizer/rbac: a rule allows a request when its group, resource and verb match and, where it
 * names resources, the request's name is among them. A create carries no name, so only rules without
 * resourceNames allow it. Returns the 403 message when nothing allows `verb`, else undefined.
 */
export function forbidden(
  policy: Rbac,
  user: string,
  verb: Verb,
  resource: 'secrets' | 'mutatingwebhookconfigurations' | WatchedResource,
  name: string | undefined,
  namespace?: string,
): string | undefined {
  const group = resource === 'mutatingwebhookconfigurations' ? 'admissionregistration.k8s.io' : '';
  const allowed =
    !policy.denied.has(`${verb} ${resource}`) &&
    GRANTS.some(
      ({ namespace: scope, rule }) =>
        (scope === undefined || scope === namespace) &&
        rule.apiGroups.includes(group) &&
        rule.resources.includes(resource) &&
        rule.verbs.includes(verb) &&
        (rule.resourceNames === undefined ||
          rule.resourceNames.length === 0 ||
          (name !== undefined && rule.resourceNames.includes(name))),
    );
  if (allowed) return undefined;
  const what =
    resource === 'mutatingwebhookconfigurations'
      ? 'mutatingwebhookconfigurations.admissionregistration.k8s.io'
      : resource;
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
