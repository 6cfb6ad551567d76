// The checks the render tests rely on catch what they claim to: each object of deploy/webhook as written, with
// one field the API requires taken away, is reported by that field; and kustomization paths that are not local
// files (remote bases, inline patches) are not looked for on disk.

import { describe, expect, it } from 'vitest';
import { missingFields } from '../helpers/api-fields.js';
import { listedPaths } from '../helpers/kustomization-files.js';
import type { Manifest } from '../helpers/kustomize.js';
import { objects, one } from '../webhook/deploy-manifests.js';

/** A deep copy of the one object of `kind`, changed by `edit`. */
function broken(kind: string, edit: (o: Manifest) => void): Manifest {
  const copy = structuredClone(one(kind));
  edit(copy);
  return copy;
}

describe('missingFields', () => {
  it('finds nothing missing in deploy/webhook as written (image set by kustomize)', () => {
    expect(objects.flatMap(missingFields)).toEqual([]);
  });

  it.each([
    {
      name: 'no apiVersion',
      object: broken('Service', (o) => delete o.apiVersion),
      missing: 'Service/osm-healthcheck-webhook: apiVersion',
    },
    {
      name: 'a namespaced kind without namespace',
      object: broken('Role', (o) => delete o.metadata.namespace),
      missing: 'Role/osm-healthcheck-webhook: metadata.namespace',
    },
    {
      name: 'a Deployment without selector',
      object: broken('Deployment', (o) => delete o.spec.selector),
      missing: 'Deployment/osm-healthcheck-webhook: spec.selector',
    },
    {
      name: 'a container without image',
      object: broken('Deployment', (o) => delete o.spec.template.spec.containers[0].image),
      missing: 'Deployment/osm-healthcheck-webhook: spec.template.spec.containers[0].image',
    },
    {
      name: 'an env var without name',
      object: broken('Deployment', (o) => delete o.spec.template.spec.containers[0].env[1].name),
      missing: 'Deployment/osm-healthcheck-webhook: spec.template.spec.containers[0].env[1].name',
    },
    {
      name: 'a Service port without port',
      object: broken('Service', (o) => delete o.spec.ports[0].port),
      missing: 'Service/osm-healthcheck-webhook: spec.ports[0].port',
    },
    {
      name: 'a Service without ports',
      object: broken('Service', (o) => {
        o.spec.ports = [];
      }),
      missing: 'Service/osm-healthcheck-webhook: spec.ports',
    },
    {
      name: 'a rule without verbs',
      object: broken('ClusterRole', (o) => delete o.rules[0].verbs),
      missing: 'ClusterRole/osm-healthcheck-webhook: rules[0].verbs',
    },
    {
      name: 'a binding without roleRef',
      object: broken('RoleBinding', (o) => delete o.roleRef),
      missing: 'RoleBinding/osm-healthcheck-webhook: roleRef',
    },
    {
      name: 'a subject without namespace',
      object: broken('ClusterRoleBinding', (o) => delete o.subjects[0].namespace),
      missing: 'ClusterRoleBinding/osm-healthcheck-webhook: subjects[0].namespace',
    },
    {
      name: 'a webhook without sideEffects',
      object: broken('MutatingWebhookConfiguration', (o) => delete o.webhooks[0].sideEffects),
      missing: 'MutatingWebhookConfiguration/osm-healthcheck: webhooks[0].sideEffects',
    },
    {
      name: 'a webhook without admissionReviewVersions',
      object: broken('MutatingWebhookConfiguration', (o) => {
        o.webhooks[0].admissionReviewVersions = [];
      }),
      missing: 'MutatingWebhookConfiguration/osm-healthcheck: webhooks[0].admissionReviewVersions',
    },
    {
      name: 'a PodDisruptionBudget without selector',
      object: broken('PodDisruptionBudget', (o) => delete o.spec.selector),
      missing: 'PodDisruptionBudget/osm-healthcheck-webhook: spec.selector',
    },
    {
      name: 'a kind the table does not know',
      object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'y' } },
      missing: 'Secret/x: no required-field table for kind Secret',
    },
  ])('$name', ({ object, missing }) => {
    expect(missingFields(object)).toEqual([missing]);
  });
});

describe('listedPaths', () => {
  it('names local files and directories by the field that lists them, and skips remote bases and inline patches', () => {
    const kustomization = {
      resources: ['a.yaml', '../base', 'https://github.com/x/y//deploy?ref=v1', 'github.com/x/y/deploy'],
      components: ['../components/c'],
      configurations: ['k.yaml'],
      patches: [{ path: 'p.yaml' }, { patch: 'apiVersion: v1\nkind: Service\n' }],
      patchesStrategicMerge: ['old.yaml', 'apiVersion: v1\nkind: Service\n'],
    };
    expect(listedPaths(kustomization)).toEqual([
      { field: 'resources[0]', path: 'a.yaml' },
      { field: 'resources[1]', path: '../base' },
      { field: 'components[0]', path: '../components/c' },
      { field: 'configurations[0]', path: 'k.yaml' },
      { field: 'patchesStrategicMerge[0]', path: 'old.yaml' },
      { field: 'patches[0].path', path: 'p.yaml' },
    ]);
  });
});
