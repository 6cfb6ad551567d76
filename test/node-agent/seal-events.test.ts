// The node agent's pure decisions about pod events and its node: which pod a proof's caller address is (only one of
// this node that asks to be sealed), the Event it gets for each verdict, and the pod networks read from a Node.

import { describe, expect, it } from 'vitest';
import { podCidrsOfNode } from '../../src/node/node-pod-cidrs.js';
import { sealEvent, sealedPodAt } from '../../src/node/seal-events.js';
import { recordValue } from '../helpers/records.js';

type Json = Record<string, unknown>;

function pod(
  name: string,
  ip: string,
  fields: { node?: string; seal?: boolean; hostNetwork?: boolean } = {},
): Json {
  const record = recordValue(fields.seal !== false);
  return {
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      annotations: { 'osm-healthcheck/status': record },
    },
    spec: { nodeName: fields.node ?? 'node-a', ...(fields.hostNetwork ? { hostNetwork: true } : {}) },
    status: { podIP: ip, podIPs: [{ ip }, { ip: `fd00::${ip.split('.').at(-1)}` }] },
  };
}

describe('sealedPodAt', () => {
  it.each([
    {
      name: 'the one pod at the address',
      pods: [pod('web', '10.88.0.7')],
      address: '10.88.0.7',
      want: 'web',
    },
    { name: 'by its IPv6 address too', pods: [pod('web', '10.88.0.7')], address: 'fd00::7', want: 'web' },
    {
      name: 'a pod of another node with the same address is not it',
      pods: [pod('web', '10.88.0.7'), pod('far', '10.88.0.7', { node: 'node-b' })],
      address: '10.88.0.7',
      want: 'web',
    },
    {
      name: 'no pod: none',
      pods: [pod('web', '10.88.0.8')],
      address: '10.88.0.7',
      skip: '0 pods of node-a have the address 10.88.0.7',
    },
    {
      name: 'a hostNetwork pod shares the node address: never it',
      pods: [pod('agent', '10.88.0.1', { hostNetwork: true })],
      address: '10.88.0.1',
      skip: '0 pods of node-a have the address 10.88.0.1',
    },
    {
      name: 'two pods at one address (one ending, one starting): neither',
      pods: [pod('old', '10.88.0.7'), pod('new', '10.88.0.7')],
      address: '10.88.0.7',
      skip: '2 pods of node-a have the address 10.88.0.7',
    },
    {
      name: 'a pod whose record does not ask to be sealed',
      pods: [pod('web', '10.88.0.7', { seal: false })],
      address: '10.88.0.7',
      skip: 'pod shop/web at 10.88.0.7 does not ask to be sealed',
    },
  ])('$name', ({ pods, address, want, skip }) => {
    const found = sealedPodAt(pods, address, 'node-a');
    if (want !== undefined)
      expect(found).toEqual({ pod: pods.find((p) => (p.metadata as Json).name === want) });
    else expect(found).toEqual({ skip });
  });

  it('a pod without a record, or with one that is not JSON, gets none', () => {
    const bare = { ...pod('web', '10.88.0.7'), metadata: { name: 'web', namespace: 'shop' } };
    expect(sealedPodAt([bare], '10.88.0.7', 'node-a')).toEqual({
      skip: 'pod shop/web at 10.88.0.7 does not ask to be sealed',
    });
    const junk = { ...bare, metadata: { ...bare.metadata, annotations: { 'osm-healthcheck/status': '{' } } };
    expect(sealedPodAt([junk], '10.88.0.7', 'node-a')).toMatchObject({ skip: expect.any(String) });
  });
});

describe('sealEvent', () => {
  const now = new Date('2026-12-06T10:00:00.123Z');

  it('sealed: a Normal event Sealed on the pod, pointing at the init container, from the agent of its node', () => {
    const event = sealEvent(
      pod('web', '10.88.0.7'),
      { sealed: true, source: '169.254.7.127' },
      'node-a',
      now,
    );
    expect(event).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: 'web.', namespace: 'shop' },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        namespace: 'shop',
        name: 'web',
        uid: 'uid-web',
        fieldPath: 'spec.initContainers{osm-healthcheck-init}',
      },
      reason: 'Sealed',
      message: expect.stringMatching(/^sealed: 15901-15904 bypass the mesh only from 169\.254\.7\.127 /),
      type: 'Normal',
      source: { component: 'osm-healthcheck-node', host: 'node-a' },
      reportingComponent: 'osm-healthcheck-node',
      reportingInstance: 'node-a',
      firstTimestamp: '2026-12-06T10:00:00Z',
      lastTimestamp: '2026-12-06T10:00:00Z',
      count: 1,
    });
  });

  it('open: a Warning NotSealed, with why, in the words init logs', () => {
    const why = "the node agent's connection arrived from 10.88.0.1, not from 169.254.7.127";
    const event = sealEvent(pod('web', '10.88.0.7'), { sealed: false, why }, 'node-a', now);
    expect(event).toMatchObject({ reason: 'NotSealed', type: 'Warning' });
    expect(event.message).toBe(
      `open: 15901-15904 bypass the mesh from every source, as without the node agent, because ${why}`,
    );
  });
});

describe('podCidrsOfNode', () => {
  it.each([
    {
      name: 'spec.podCIDRs, both families, canonical',
      node: { spec: { podCIDR: '10.88.1.0/24', podCIDRs: ['10.88.1.0/24', 'FD00:88:1::/64'] } },
      want: ['10.88.1.0/24', 'fd00:88:1::/64'],
    },
    {
      name: 'an older node: spec.podCIDR alone',
      node: { spec: { podCIDR: '10.88.1.0/24' } },
      want: ['10.88.1.0/24'],
    },
    {
      name: 'none: a CNI with its own IPAM',
      node: { spec: {} },
      missing:
        'node node-a has no spec.podCIDRs: its CNI assigns pod addresses itself; give its pod networks with --pod-cidr (env OSM_HEALTHCHECK_POD_CIDR)',
    },
    {
      name: 'a value that is no network',
      node: { spec: { podCIDRs: ['10.88.1.1/24'] } },
      missing: expect.stringMatching(/^node node-a's spec\.podCIDRs "10\.88\.1\.1\/24" has host bits set/),
    },
    { name: 'no object at all', node: 'junk', missing: expect.stringContaining('has no spec.podCIDRs') },
  ])('$name', ({ node, want, missing }) => {
    const read = podCidrsOfNode(node, 'node-a');
    if (want !== undefined) expect('cidrs' in read && read.cidrs.map((c) => c.text)).toEqual(want);
    else expect(read).toEqual({ missing });
  });
});
