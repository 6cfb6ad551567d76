// Which documents are workloads and where their pod template sits.

import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/rewrite/manifest-error.js';
import { podTemplates, readWorkloads } from '../../src/rewrite/workload.js';

const template = { metadata: { annotations: { a: 'b' } }, spec: { containers: [] } };

describe('podTemplates', () => {
  it.each([
    {
      name: 'Pod',
      doc: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations: { a: 'b' } }, spec: {} },
      specPath: ['spec'],
      resource: 'Pod/p',
    },
    {
      name: 'Deployment',
      doc: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd', namespace: 'shop' },
        spec: { template },
      },
      specPath: ['spec', 'template', 'spec'],
      resource: 'Deployment/d',
      namespace: 'shop',
    },
    {
      name: 'StatefulSet',
      doc: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { template } },
      specPath: ['spec', 'template', 'spec'],
      resource: 'StatefulSet/s',
    },
    {
      name: 'DaemonSet',
      doc: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds' }, spec: { template } },
      specPath: ['spec', 'template', 'spec'],
      resource: 'DaemonSet/ds',
    },
    {
      name: 'ReplicaSet',
      doc: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs' }, spec: { template } },
      specPath: ['spec', 'template', 'spec'],
      resource: 'ReplicaSet/rs',
    },
    {
      name: 'ReplicationController',
      doc: { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc' }, spec: { template } },
      specPath: ['spec', 'template', 'spec'],
      resource: 'ReplicationController/rc',
    },
    {
      name: 'Job',
      doc: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template } },
      specPath: ['spec', 'template', 'spec'],
      resource: 'Job/j',
    },
    {
      name: 'CronJob',
      doc: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'c' },
        spec: { jobTemplate: { spec: { template } } },
      },
      specPath: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
      resource: 'CronJob/c',
    },
    {
      name: "Argo Rollouts' Rollout",
      doc: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'r' },
        spec: { template },
      },
      specPath: ['spec', 'template', 'spec'],
      resource: 'Rollout/r',
    },
    {
      name: "OpenKruise's CloneSet",
      doc: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'c' },
        spec: { template },
      },
      specPath: ['spec', 'template', 'spec'],
      resource: 'CloneSet/c',
    },
    {
      name: "OpenKruise's Advanced StatefulSet",
      doc: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'StatefulSet',
        metadata: { name: 's' },
        spec: { template },
      },
      specPath: ['spec', 'template', 'spec'],
      resource: 'StatefulSet/s',
    },
    {
      name: "OpenKruise's Advanced DaemonSet",
      doc: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'DaemonSet',
        metadata: { name: 'd' },
        spec: { template },
      },
      specPath: ['spec', 'template', 'spec'],
      resource: 'DaemonSet/d',
    },
    {
      name: 'an older group version',
      doc: {
        apiVersion: 'extensions/v1beta1',
        kind: 'Deployment',
        metadata: { name: 'old' },
        spec: { template },
      },
      specPath: ['spec', 'template', 'spec'],
      resource: 'Deployment/old',
    },
    {
      name: 'a generated name',
      doc: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { generateName: 'web-', annotations: { a: 'b' } },
        spec: {},
      },
      specPath: ['spec'],
      resource: 'Pod/web-*',
    },
  ])('$name', ({ doc, specPath, resource, namespace }) => {
    expect(podTemplates(doc)).toEqual([
      { specPath, annotations: { a: 'b' }, resource, namespace, objectPath: [] },
    ]);
  });

  it('finds the items of a List, and of a typed list whose items carry no kind', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap' },
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} },
        {
          apiVersion: 'apps/v1',
          kind: 'DeploymentList',
          items: [{ metadata: { name: 'd' }, spec: { template: { spec: {} } } }],
        },
      ],
    };
    expect(podTemplates(list)).toEqual([
      {
        specPath: ['items', 1, 'spec'],
        annotations: undefined,
        resource: 'Pod/p',
        namespace: undefined,
        objectPath: ['items', 1],
      },
      {
        specPath: ['items', 2, 'items', 0, 'spec', 'template', 'spec'],
        annotations: undefined,
        resource: 'Deployment/d',
        namespace: undefined,
        objectPath: ['items', 2, 'items', 0],
      },
    ]);
  });

  it.each([
    { name: 'ConfigMap', doc: { apiVersion: 'v1', kind: 'ConfigMap', data: {} } },
    {
      name: 'a CRD called Job in another group',
      doc: { apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job', spec: {} },
    },
    { name: 'no kind', doc: { spec: { containers: [] } } },
    { name: 'a scalar document', doc: 'hello' },
    { name: 'an empty document', doc: null },
  ])('passes $name through', ({ doc }) => {
    expect(podTemplates(doc)).toEqual([]);
  });

  it('annotations are read as strings (an unquoted false still opts out)', () => {
    const doc = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { annotations: { 'osm-healthcheck/rewrite-probes': false, n: 1 } },
      spec: {},
    };
    expect(podTemplates(doc)[0]?.annotations).toEqual({ 'osm-healthcheck/rewrite-probes': 'false', n: '1' });
  });

  it.each([
    {
      name: 'a Deployment without a template',
      doc: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1 } },
      path: ['spec', 'template'],
      message: 'Deployment/d: spec.template: a Deployment needs a pod template here, got nothing',
    },
    {
      name: 'a template without a spec',
      doc: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'c' },
        spec: { jobTemplate: { spec: { template: { metadata: {} } } } },
      },
      path: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
      message:
        'CronJob/c: spec.jobTemplate.spec.template.spec: a pod template needs a spec here, got nothing',
    },
    {
      name: 'a Pod without a spec',
      doc: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
      path: ['spec'],
      message: 'Pod/p: spec: a pod needs a spec here, got nothing',
    },
    {
      name: 'a List item without a template',
      doc: {
        apiVersion: 'v1',
        kind: 'List',
        items: [{ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: 'x' } }],
      },
      path: ['items', 0, 'spec', 'template'],
      message: 'Job/j: items[0].spec.template: a Job needs a pod template here, got "x"',
    },
  ])('refuses $name', ({ doc, path, message }) => {
    expect(() => podTemplates(doc)).toThrow(ManifestError);
    expect(() => podTemplates(doc)).toThrow(message);
    try {
      podTemplates(doc);
    } catch (err) {
      expect((err as ManifestError).path).toEqual(path);
    }
  });
});

describe('readWorkloads: what passes through, said', () => {
  const containers = { template: { spec: { containers: [{ name: 'a' }] } } };
  it.each([
    {
      name: 'no kind',
      doc: { apiVersion: 'v1', spec: containers },
      passed: [{ objectPath: [], why: 'no kind: not a Kubernetes object' }],
    },
    {
      name: 'no apiVersion',
      doc: { kind: 'Pod', spec: { containers: [] } },
      passed: [{ objectPath: [], why: 'no apiVersion: not a Kubernetes object' }],
    },
    {
      name: 'neither',
      doc: { metadata: { name: 'x' } },
      passed: [{ objectPath: [], why: 'no kind and no apiVersion: not a Kubernetes object' }],
    },
    {
      name: 'a pod template in a kind inject does not know',
      doc: {
        apiVersion: 'serving.knative.dev/v1',
        kind: 'Service',
        metadata: { name: 'k' },
        spec: containers,
      },
      passed: [
        {
          objectPath: [],
          why: 'Service/k (serving.knative.dev/v1) holds a pod template (spec.template), but inject does not rewrite this kind',
        },
      ],
    },
    {
      name: "a known kind's name in another group, with a pod template",
      doc: { apiVersion: 'example.com/v1', kind: 'Deployment', metadata: { name: 'e' }, spec: containers },
      passed: [
        {
          objectPath: [],
          why: 'Deployment/e (example.com/v1) holds a pod template (spec.template), but inject does not rewrite this kind',
        },
      ],
    },
    {
      name: 'a List item without kind',
      doc: { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', metadata: {} }] },
      passed: [{ objectPath: ['items', 0], why: 'no kind: not a Kubernetes object' }],
    },
    {
      name: 'a ConfigMap (no pod template): nothing to say',
      doc: { apiVersion: 'v1', kind: 'ConfigMap' },
      passed: [],
    },
    {
      name: 'a Rollout that points at a Deployment (workloadRef): nothing of its own',
      doc: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'r' },
        spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } },
      },
      passed: [],
    },
  ])('$name', ({ doc, passed }) => {
    expect(readWorkloads(doc)).toEqual({ templates: [], passed });
  });
});

describe('the opt-out annotation takes "true" or "false"', () => {
  const pod = (value: unknown) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', annotations: { 'osm-healthcheck/rewrite-probes': value } },
    spec: {},
  });
  it.each(['false', 'true', 'False', ' true ', false, true])('takes %j', (value) => {
    expect(podTemplates(pod(value))).toHaveLength(1);
  });
  it.each(['no', '0', 'off', 'yes', ''])('refuses %j at the annotation', (value) => {
    expect(() => podTemplates(pod(value))).toThrow(
      `Pod/p: metadata.annotations.osm-healthcheck/rewrite-probes: must be "true" or "false", got ${JSON.stringify(value)}`,
    );
  });
});
