// deploy/node, as kustomize renders it over deploy/webhook: the node agent with exactly the powers docs/node.md
// names (hostNetwork, root with NET_ADMIN and NET_RAW, nothing privileged, no API access, the host's xtables lock),
// args its parser accepts once the pod networks are set, and the webhook told to seal.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_ENV, POD_CIDR_ENV, parseNodeOptions } from '../../src/node/options.js';
import { AGENT_PORT } from '../../src/seal/sources.js';
import { ROOT } from '../helpers/cli.js';
import {
  type Manifest,
  type Overlay,
  render,
  skipWithoutKubectl,
  tempOverlay,
} from '../helpers/kustomize.js';

describe.skipIf(skipWithoutKubectl('test/deploy/node.test.ts'))('deploy/node over deploy/webhook', () => {
  let overlay: Overlay;
  let objects: Manifest[];
  beforeAll(async () => {
    overlay = tempOverlay({ resources: [`${ROOT}deploy/webhook`], components: [`${ROOT}deploy/node`] });
    objects = await render(overlay.dir);
  });
  afterAll(() => overlay?.remove());

  const agent = () => objects.find((o) => o.kind === 'DaemonSet') as Manifest;

  it('runs the agent on every node in the host network, root with NET_ADMIN and NET_RAW only', () => {
    const { metadata, spec } = agent();
    expect(metadata).toMatchObject({ name: 'osm-healthcheck-node', namespace: 'kube-system' });
    const pod = spec.template.spec;
    expect(pod).toMatchObject({ hostNetwork: true, automountServiceAccountToken: false });
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.hostPID).toBeUndefined();
    expect(pod.hostIPC).toBeUndefined();
    const [container] = pod.containers;
    expect(container.image).toBe('osm-healthcheck:0.1.0');
    expect(container.securityContext).toEqual({
      runAsUser: 0,
      runAsNonRoot: false,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
    });
    expect(container.ports).toEqual([{ name: 'seal-proof', containerPort: AGENT_PORT }]);
    expect(pod.volumes).toEqual([
      { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' } },
    ]);
  });

  it("its args and env are the parser's once the pod networks are set, none set for you, the backend auto", () => {
    const [container] = agent().spec.template.spec.containers;
    expect(container.env).toEqual([
      { name: POD_CIDR_ENV, value: '' },
      { name: BACKEND_ENV, value: 'auto' },
    ]);
    for (const { name, value } of container.env) process.env[name] = value;
    process.env[POD_CIDR_ENV] = '10.88.0.0/16';
    try {
      expect(parseNodeOptions(container.args.slice(1))).toMatchObject({
        mode: 'run',
        port: AGENT_PORT,
        backend: 'auto',
      });
      process.env[BACKEND_ENV] = 'nftables';
      expect(parseNodeOptions(container.args.slice(1)).backend).toBe('nftables');
    } finally {
      delete process.env[POD_CIDR_ENV];
      delete process.env[BACKEND_ENV];
    }
  });

  it('tells the webhook to seal', () => {
    const webhook = objects.find((o) => o.kind === 'Deployment') as Manifest;
    expect(webhook.spec.template.spec.containers[0].env).toContainEqual({
      name: 'OSM_HEALTHCHECK_SEAL',
      value: 'node',
    });
  });
});
