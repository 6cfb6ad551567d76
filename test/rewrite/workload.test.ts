// Which documents are workloads and where their pod template sits.

import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/rewrite/manifest-error.js';
import { podTemplates } from '../../src/rewrite/workload.js';

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
      name: 'no apiVersion: the kind decides',
      doc: { kind: 'Pod', metadata: { generateName: 'web-', annotations: { a: 'b' } }, spec: {} },
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
      kind: 'List',
      items: [
        { kind: 'ConfigMap' },
        { kind: 'Pod', metadata: { name: 'p' }, spec: {} },
        { kind: 'DeploymentList', items: [{ metadata: { name: 'd' }, spec: { template: { spec: {} } } }] },
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
      doc: { kind: 'Pod', metadata: { name: 'p' } },
      path: ['spec'],
      message: 'Pod/p: spec: a pod needs a spec here, got nothing',
    },
    {
      name: 'a List item without a template',
      doc: { kind: 'List', items: [{ kind: 'Job', metadata: { name: 'j' }, spec: { template: 'x' } }] },
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
