// ownedContainer: what inject wants, laid over the copy a pod has. What others added stays; what is ours is ours.

import { describe, expect, it } from 'vitest';
import { companionContainer, DEFAULT_IMAGE } from '../../src/rewrite/companion.js';
import { ownedContainer, PLACEMENT_FIELDS } from '../../src/rewrite/owned-container.js';
import { COMPANION_RESOURCES } from '../../src/rewrite/resources/defaults.js';
import type { Container } from '../../src/rewrite/types.js';

const companion = (native: boolean) =>
  companionContainer({
    image: DEFAULT_IMAGE,
    table: {},
    native,
    shutdownGraceSeconds: 30,
    resources: COMPANION_RESOURCES,
  });

describe('ownedContainer', () => {
  it('PLACEMENT_FIELDS names every field only one placement writes', () => {
    const native = Object.keys(companion(true));
    const first = Object.keys(companion(false));
    const onlyOne = [
      ...native.filter((k) => !first.includes(k)),
      ...first.filter((k) => !native.includes(k)),
    ];
    expect([...onlyOne].sort()).toEqual([...PLACEMENT_FIELDS].sort());
  });

  it('no copy yet: the wanted container as it is', () => {
    const wanted = companion(false);
    expect(ownedContainer(undefined, wanted)).toBe(wanted);
  });

  it.each([
    {
      name: 'a field someone added at the top (volumeMounts)',
      existing: { name: 'c', image: 'a:1', volumeMounts: [{ name: 'v', mountPath: '/v' }] },
      wanted: { name: 'c', image: 'a:1' },
      laid: { name: 'c', image: 'a:1', volumeMounts: [{ name: 'v', mountPath: '/v' }] },
    },
    {
      name: 'a LimitRange default under resources',
      existing: { name: 'c', resources: { limits: { cpu: '1', memory: '1Gi' } } },
      wanted: { name: 'c', resources: { limits: { memory: '128Mi' } } },
      laid: { name: 'c', resources: { limits: { memory: '128Mi', cpu: '1' } } },
    },
    {
      name: "someone else's env var, and a defaulted fieldRef.apiVersion",
      existing: {
        name: 'c',
        env: [
          { name: 'OTHER', value: 'x' },
          { name: 'IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
        ],
      },
      wanted: { name: 'c', env: [{ name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }] },
      laid: {
        name: 'c',
        env: [
          { name: 'OTHER', value: 'x' },
          { name: 'IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
        ],
      },
    },
    {
      name: 'a probe handler: defaults kept, anything else in it replaced, another handler dropped',
      existing: {
        name: 'c',
        livenessProbe: {
          httpGet: { path: '/x', port: 1, scheme: 'HTTP', httpHeaders: [{ name: 'H', value: '1' }] },
          tcpSocket: { port: 2 },
          timeoutSeconds: 1,
        },
      },
      wanted: { name: 'c', livenessProbe: { httpGet: { path: '/healthz', port: 15904 } } },
      laid: {
        name: 'c',
        livenessProbe: { httpGet: { path: '/healthz', port: 15904, scheme: 'HTTP' }, timeoutSeconds: 1 },
      },
    },
    {
      name: 'a whole list of values (args, capabilities.drop) is ours',
      existing: {
        name: 'c',
        args: ['serve', '--x'],
        securityContext: { capabilities: { drop: ['NET_RAW'] } },
      },
      wanted: { name: 'c', args: ['serve'], securityContext: { capabilities: { drop: ['ALL'] } } },
      laid: { name: 'c', args: ['serve'], securityContext: { capabilities: { drop: ['ALL'] } } },
    },
    {
      name: 'a placement field the wanted container lacks goes',
      existing: { name: 'c', restartPolicy: 'Always', imagePullPolicy: 'Always' },
      wanted: { name: 'c', lifecycle: { postStart: { exec: { command: ['wait'] } } } },
      laid: {
        name: 'c',
        lifecycle: { postStart: { exec: { command: ['wait'] } } },
        imagePullPolicy: 'Always',
      },
    },
  ])('$name', ({ existing, wanted, laid }) => {
    const frozen = structuredClone(existing);
    expect(ownedContainer(existing as Container, wanted as Container)).toEqual(laid);
    expect(existing).toEqual(frozen);
  });
});
