// A pod's workload by its controller, and the one command that fixes each kind of group.

import { describe, expect, it } from 'vitest';
import { controllerOf, fixCommand, type Owner, ownerKey, workloadOf } from '../../src/analyze/workloads.js';

const parents = new Map<string, Owner>([
  [ownerKey('shop', { kind: 'ReplicaSet', name: 'web-5d8f' }), { kind: 'Deployment', name: 'web' }],
  [ownerKey('shop', { kind: 'Job', name: 'nightly-29000' }), { kind: 'CronJob', name: 'nightly' }],
  [ownerKey('shop', { kind: 'ReplicaSet', name: 'roll-1' }), { kind: 'Rollout', name: 'roll' }],
]);

describe('controllerOf', () => {
  it('takes the owner marked controller, and nothing else', () => {
    const refs = [
      { kind: 'ConfigMap', name: 'c' },
      { kind: 'ReplicaSet', name: 'web-5d8f', controller: true },
    ];
    expect(controllerOf({ metadata: { ownerReferences: refs } })).toEqual({
      kind: 'ReplicaSet',
      name: 'web-5d8f',
    });
    expect(controllerOf({ metadata: { ownerReferences: [{ kind: 'X', name: 'y' }] } })).toBeUndefined();
    expect(controllerOf({ metadata: {} })).toBeUndefined();
  });
});

describe('workloadOf and fixCommand', () => {
  it.each<{ owner?: Owner; kind: string; name: string; cls: 'stale' | 'uncovered' | 'failing'; fix: string }>(
    [
      {
        owner: { kind: 'ReplicaSet', name: 'web-5d8f' },
        kind: 'Deployment',
        name: 'web',
        cls: 'uncovered',
        fix: 'kubectl -n shop rollout restart deployment/web',
      },
      {
        owner: { kind: 'StatefulSet', name: 'db' },
        kind: 'StatefulSet',
        name: 'db',
        cls: 'stale',
        fix: 'kubectl -n shop rollout restart statefulset/db',
      },
      {
        owner: { kind: 'DaemonSet', name: 'agent' },
        kind: 'DaemonSet',
        name: 'agent',
        cls: 'stale',
        fix: 'kubectl -n shop rollout restart daemonset/agent',
      },
      {
        owner: { kind: 'Job', name: 'nightly-29000' },
        kind: 'CronJob',
        name: 'nightly',
        cls: 'uncovered',
        fix: 'kubectl -n shop create job --from=cronjob/nightly nightly-rerun',
      },
      {
        owner: { kind: 'Job', name: 'once' },
        kind: 'Job',
        name: 'once',
        cls: 'uncovered',
        fix: 'kubectl -n shop delete pod p-1 p-2',
      },
      {
        owner: { kind: 'ReplicaSet', name: 'roll-1' },
        kind: 'ReplicaSet',
        name: 'roll-1',
        cls: 'stale',
        fix: 'kubectl -n shop delete pod p-1 p-2',
      },
      {
        kind: 'Pod',
        name: 'p-1',
        cls: 'uncovered',
        fix: 'kubectl -n shop get pod p-1 -o yaml | kubectl replace --force -f -',
      },
      {
        owner: { kind: 'ReplicaSet', name: 'web-5d8f' },
        kind: 'Deployment',
        name: 'web',
        cls: 'failing',
        fix: 'kubectl -n shop logs p-1 -c osm-healthcheck --previous; kubectl -n shop describe pod p-1',
      },
    ],
  )('$kind/$name ($cls): $fix', ({ owner, kind, name, cls, fix }) => {
    const workload = workloadOf('shop', 'p-1', owner, parents);
    expect(workload).toEqual({ namespace: 'shop', kind, name });
    expect(fixCommand(workload, cls, ['p-1', 'p-2'])).toBe(fix);
  });

  it('nothing to do for covered and untouched groups', () => {
    const workload = { namespace: 'shop', kind: 'Deployment', name: 'web' };
    expect(fixCommand(workload, 'covered', ['p'])).toBeUndefined();
    expect(fixCommand(workload, 'untouched', ['p'])).toBeUndefined();
  });
});
