// deploy/webhook/rbac.yaml grants the webhook exactly what self-managed TLS needs (issue 16's contract) and what
// Pod Security needs (issue 23), and nothing more: create Secrets; get/update its own Secret; get/update its own
// MutatingWebhookConfiguration; list/watch namespaces, and (issues 26, 28) limitranges, resourcequotas and nodes;
// all bound to the service account its pods run as.

import { describe, expect, it } from 'vitest';
import { grants } from '../helpers/rbac-grants.js';
import { CONTRACT, objects, one } from './deploy-manifests.js';

const namespace = one('Namespace').metadata.name as string;
const serviceAccount = one('ServiceAccount');
const subject = { kind: 'ServiceAccount', name: serviceAccount.metadata.name, namespace };

describe('deploy/webhook RBAC', () => {
  it('the only RBAC objects: one Role, one ClusterRole, their bindings, the service account', () => {
    const rbac = objects.filter((o) => /rbac|ServiceAccount/.test(`${o.apiVersion} ${o.kind}`));
    expect(rbac.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/osm-healthcheck-webhook',
      'ClusterRoleBinding/osm-healthcheck-webhook',
      'Role/osm-healthcheck-webhook',
      'RoleBinding/osm-healthcheck-webhook',
      `ServiceAccount/${CONTRACT.serviceAccount}`,
    ]);
  });

  it('Role: create Secrets; get and update only its own Secret', () => {
    const role = one('Role');
    expect(role.metadata.namespace).toBe(namespace);
    expect(grants(role)).toEqual([
      '/secrets[*] create',
      `/secrets[${CONTRACT.tlsSecret}] get`,
      `/secrets[${CONTRACT.tlsSecret}] update`,
    ]);
  });

  it('ClusterRole: get and update only its own MutatingWebhookConfiguration; list and watch namespaces, LimitRanges, ResourceQuotas, nodes', () => {
    const webhookConfig = one('MutatingWebhookConfiguration');
    expect(webhookConfig.metadata.name).toBe(CONTRACT.webhookConfig);
    expect(grants(one('ClusterRole'))).toEqual([
      '/limitranges[*] list',
      '/limitranges[*] watch',
      '/namespaces[*] list',
      '/namespaces[*] watch',
      '/nodes[*] list',
      '/nodes[*] watch',
      '/resourcequotas[*] list',
      '/resourcequotas[*] watch',
      ...['get', 'update'].map(
        (verb) =>
          `admissionregistration.k8s.io/mutatingwebhookconfigurations[${CONTRACT.webhookConfig}] ${verb}`,
      ),
    ]);
  });

  it.each([
    { binding: 'RoleBinding', role: 'Role' },
    { binding: 'ClusterRoleBinding', role: 'ClusterRole' },
  ])('$binding binds the $role to the service account of the webhook pods', ({ binding, role }) => {
    const bound = one(binding);
    expect(bound.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: role,
      name: one(role).metadata.name,
    });
    expect(bound.subjects).toEqual([subject]);
    expect(one('Deployment').spec.template.spec.serviceAccountName).toBe(subject.name);
  });
});
