// Whether the caller may install the webhook: a SelfSubjectAccessReview for each object deploy/webhook creates,
// and for each right its Role and ClusterRole grant (RBAC lets nobody grant a right they lack, unless they may
// `escalate` roles). Pure list and verdict, and the thin reader that asks the API server.

import type { Check } from './checks.js';
import type { ClusterClient } from './kube-client.js';

/** One question to the authorizer: `verb` on `resource` (in `group`), in `namespace` or cluster-wide, by name. */
export interface Access {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
}

/** What deploy/webhook creates (test/analyze/pre-rights.test.ts holds this to the manifests). */
export function installCreates(namespace: string): Access[] {
  const inNamespace = (group: string, resource: string): Access => ({
    verb: 'create',
    group,
    resource,
    namespace,
  });
  const cluster = (group: string, resource: string): Access => ({ verb: 'create', group, resource });
  return [
    cluster('', 'namespaces'),
    inNamespace('', 'serviceaccounts'),
    inNamespace('rbac.authorization.k8s.io', 'roles'),
    inNamespace('rbac.authorization.k8s.io', 'rolebindings'),
    cluster('rbac.authorization.k8s.io', 'clusterroles'),
    cluster('rbac.authorization.k8s.io', 'clusterrolebindings'),
    inNamespace('apps', 'deployments'),
    inNamespace('policy', 'poddisruptionbudgets'),
    inNamespace('', 'services'),
    cluster('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'),
  ];
}

/** What the webhook's Role and ClusterRole grant (deploy/webhook/rbac.yaml): the installer must hold each. */
export function installGrants(namespace: string, config: string): Access[] {
  const watched = ['namespaces', 'limitranges', 'resourcequotas', 'nodes'].flatMap((resource) =>
    ['list', 'watch'].map((verb) => ({ verb, group: '', resource })),
  );
  return [
    { verb: 'create', group: '', resource: 'secrets', namespace },
    { verb: 'get', group: '', resource: 'secrets', namespace, name: 'osm-healthcheck-webhook-tls' },
    { verb: 'update', group: '', resource: 'secrets', namespace, name: 'osm-healthcheck-webhook-tls' },
    {
      verb: 'get',
      group: 'admissionregistration.k8s.io',
      resource: 'mutatingwebhookconfigurations',
      name: config,
    },
    {
      verb: 'update',
      group: 'admissionregistration.k8s.io',
      resource: 'mutatingwebhookconfigurations',
      name: config,
    },
    ...watched,
  ];
}

/** `create clusterroles.rbac.authorization.k8s.io`, `get secrets/NAME in NS`: kubectl auth can-i's words. */
export function describeAccess(access: Access): string {
  const resource = access.group === '' ? access.resource : `${access.resource}.${access.group}`;
  const named = access.name === undefined ? resource : `${resource}/${access.name}`;
  return `${access.verb} ${named}${access.namespace === undefined ? '' : ` in ${access.namespace}`}`;
}

export type Answer = { allowed: boolean } | { unknown: string };

/** The verdict on the answers: the creates, the grants, and escalate on clusterroles and roles, which stands for the grants. */
export function rightsChecks(
  creates: readonly (readonly [Access, Answer])[],
  grants: readonly (readonly [Access, Answer])[],
  escalate: readonly Answer[] | undefined,
): Check[] {
  const unknown = [...creates, ...grants].find(([, a]) => 'unknown' in a);
  if (unknown !== undefined) {
    const [, answer] = unknown;
    return [
      {
        section: 'pre',
        name: 'install-rights',
        status: 'skip',
        detail: `cannot check whether you may install: ${'unknown' in answer ? answer.unknown : ''}`,
      },
    ];
  }
  const denied = (list: readonly (readonly [Access, Answer])[]) =>
    list.filter(([, a]) => 'allowed' in a && !a.allowed).map(([access]) => describeAccess(access));
  const missing = denied(creates);
  const ungrantable = denied(grants);
  const mayEscalate = escalate?.every((a) => 'allowed' in a && a.allowed) === true;
  const checks: Check[] = [
    missing.length === 0
      ? {
          section: 'pre',
          name: 'install-rights',
          status: 'ok',
          detail: `you may create each of the ${creates.length} kinds of object the install creates`,
        }
      : {
          section: 'pre',
          name: 'install-rights',
          status: 'fail',
          detail: `the install needs rights you lack: ${missing.join(', ')} (kubectl auth can-i; ask a cluster admin)`,
        },
  ];
  if (ungrantable.length > 0 && !mayEscalate) {
    checks.push({
      section: 'pre',
      name: 'install-rights',
      status: 'fail',
      detail: `the webhook's Role and ClusterRole grant rights you do not hold, which RBAC lets you grant only with escalate on roles and clusterroles: ${ungrantable.join(', ')}`,
    });
  }
  return checks;
}

const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';

/** The authorizer's answer for one access, as the caller. */
export async function askAccess(client: ClusterClient, access: Access): Promise<Answer> {
  const { verb, group, resource, namespace, name } = access;
  const reply = await client.post(SSAR, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: {
      resourceAttributes: {
        verb,
        group,
        resource,
        ...(namespace === undefined ? {} : { namespace }),
        ...(name === undefined ? {} : { name }),
      },
    },
  });
  if (!reply.ok) {
    return {
      unknown:
        reply.status === 403
          ? 'needs create selfsubjectaccessreviews.authorization.k8s.io'
          : `the API server refused a SelfSubjectAccessReview: ${reply.message} (HTTP ${reply.status})`,
    };
  }
  const status = reply.body.status as { allowed?: unknown } | undefined;
  return { allowed: status?.allowed === true };
}

export async function readInstallRights(
  client: ClusterClient,
  namespace: string,
  config: string,
): Promise<Check[]> {
  const ask = (list: Access[]) =>
    Promise.all(list.map(async (access) => [access, await askAccess(client, access)] as const));
  const creates = await ask(installCreates(namespace));
  const grants = await ask(installGrants(namespace, config));
  const lacking = grants.some(([, a]) => 'allowed' in a && !a.allowed);
  const escalate = lacking
    ? await Promise.all(
        [
          { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
          { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace },
        ].map((access) => askAccess(client, access)),
      )
    : undefined;
  return rightsChecks(creates, grants, escalate);
}
