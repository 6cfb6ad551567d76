// What the webhook's caches keep of each object, from whole objects as the API server serves them (the big-cluster
// benchmark's own, bench/cluster-objects.mjs, with the metadata the API server adds): of a node its kubelet
// version, of a namespace the level its Pod Security labels enforce, of a LimitRange its limits, of a
// ResourceQuota spec.hard, scopes, scopeSelector and status.hard and used. Nothing else survives.

import { describe, expect, it } from 'vitest';
import {
  limitRangeObject,
  namespaceObject,
  nodeObject,
  resourceQuotaObject,
  resourceQuotaStatus,
} from '../../bench/cluster-objects.mjs';
import { keptNamespace } from '../../src/cluster/namespace-policies.js';
import { keptLimitRange, keptResourceQuota } from '../../src/cluster/namespace-rules.js';
import { kubeletOf } from '../../src/cluster/node-kubelets.js';
import type { KubeObject } from '../../src/webhook/reflector.js';

type Json = Record<string, unknown>;

/** `object` as a list or watch answer carries it: uid, resourceVersion, creationTimestamp, managedFields. */
function served(object: Json, manager: string): KubeObject {
  const metadata = object.metadata as Json;
  return {
    ...object,
    metadata: {
      ...metadata,
      uid: '5c0ffee0-0000-4000-8000-000000000042',
      resourceVersion: '48213',
      creationTimestamp: '2026-11-27T10:00:00Z',
      managedFields: [
        {
          manager,
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-11-27T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': {} }, 'f:spec': {}, 'f:status': {} },
        },
      ],
    },
  };
}

describe('what the caches keep of whole objects', () => {
  it('a node (about 10 KB, 40 images): its kubelet version only', () => {
    const node = served(nodeObject(7), 'kubelet');
    expect(JSON.stringify(node).length).toBeGreaterThan(10_000);
    expect(kubeletOf(node)).toEqual({ version: { major: 1, minor: 36 } });
    expect(kubeletOf(served(nodeObject(9), 'kubelet'))).toEqual({ version: { major: 1, minor: 35 } });
  });

  it('a namespace: the level and version its Pod Security labels enforce, not its other labels or annotations', () => {
    const namespace = served(namespaceObject(1), 'kubectl-client-side-apply');
    expect(keptNamespace(namespace, 'team-0001', 'privileged')).toEqual({
      level: 'baseline',
      version: 'latest',
      source: 'namespace "team-0001"',
    });
  });

  it('a LimitRange applied with kubectl: its names and each limit’s bounds', () => {
    const object = limitRangeObject('team-0001');
    const kept = keptLimitRange(served(object, 'kubectl-client-side-apply'));
    expect(kept).toEqual({ metadata: { name: 'defaults', namespace: 'team-0001' }, spec: object.spec });
  });

  it('a ResourceQuota with the status the quota controller wrote: spec.hard, scopeSelector, status.hard and used', () => {
    const object = { ...resourceQuotaObject('team-0001'), status: resourceQuotaStatus(3) };
    const kept = keptResourceQuota(served(object, 'kube-controller-manager'));
    expect(kept).toEqual({
      metadata: { name: 'compute', namespace: 'team-0001' },
      spec: { hard: object.spec.hard, scopeSelector: object.spec.scopeSelector },
      status: { hard: object.status.hard, used: object.status.used },
    });
  });

  it('a ResourceQuota with scopes and no status yet (the controller has not run): no status', () => {
    const object = {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'best-effort', namespace: 'ns', labels: { team: 'a' } },
      spec: { hard: { pods: '10' }, scopes: ['BestEffort'] },
    };
    expect(keptResourceQuota(served(object, 'kubectl'))).toEqual({
      metadata: { name: 'best-effort', namespace: 'ns' },
      spec: { hard: { pods: '10' }, scopes: ['BestEffort'] },
    });
  });

  it('fields LimitRanger does not read, in an item or beside the limits, are dropped', () => {
    const object: KubeObject = {
      metadata: { name: 'lr', namespace: 'ns' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2' }, note: 'from a future API', default: { memory: '1Gi' } },
        ],
        future: { field: true },
      },
    };
    expect(keptLimitRange(object)).toEqual({
      metadata: { name: 'lr', namespace: 'ns' },
      spec: { limits: [{ type: 'Container', max: { cpu: '2' }, default: { memory: '1Gi' } }] },
    });
  });

  it('objects without a spec keep only their names', () => {
    expect(keptLimitRange({ metadata: { name: 'lr', namespace: 'ns' } })).toEqual({
      metadata: { name: 'lr', namespace: 'ns' },
      spec: {},
    });
    expect(keptResourceQuota({ metadata: { name: 'q', namespace: 'ns' }, spec: 'nonsense' })).toEqual({
      metadata: { name: 'q', namespace: 'ns' },
    });
  });
});
