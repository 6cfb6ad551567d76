// deploy/node, as kustomize renders it over deploy/webhook: the node agent with exactly the powers docs/node.md
// names (hostNetwork, root with NET_ADMIN and NET_RAW, nothing privileged, the host's xtables lock; get nodes, list
// pods and create events), args its parser accepts as they are (the networks read from its node, which the
// downward API names), and the webhook told to seal.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_ENV, NODE_NAME_ENV, POD_CIDR_ENV, parseNodeOptions } from '../../src/node/options.js';
import { AGENT_PORT } from '../../src/seal/sources.js';
import { ROOT } from '../helpers/cli.js';
import {
  type Manifest,
  type Overlay,
  render,
  skipWithoutKubectl,
  tempOverlay,
} from '../helpers/kustomize.js';
import { grants } from '../helpers/rbac-grants.js';

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
    expect(pod).toMatchObject({ hostNetwork: true, serviceAccountName: 'osm-healthcheck-node' });
    expect(pod.automountServiceAccountToken).toBeUndefined();
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

  it("its args are the parser's as they are: the pod networks from its own node, which the downward API names", () => {
    const [container] = agent().spec.template.spec.containers;
    expect(container.env).toEqual([
      { name: POD_CIDR_ENV, value: '' },
      { name: NODE_NAME_ENV, valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      { name: BACKEND_ENV, value: 'auto' },
    ]);
    // As in the pod: the downward API's node name, the API server Kubernetes names in every pod's environment.
    const env = {
      [NODE_NAME_ENV]: 'node-a',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      [BACKEND_ENV]: 'auto',
    };
    expect(parseNodeOptions(container.args.slice(1), env)).toMatchObject({
      mode: 'run',
      port: AGENT_PORT,
      podCidrs: { from: 'node', node: { name: 'node-a' } },
      events: { node: { name: 'node-a' } },
      backend: 'auto',
    });
    expect(parseNodeOptions(container.args.slice(1), { ...env, [BACKEND_ENV]: 'nftables' }).backend).toBe(
      'nftables',
    );
  });

  it('grants the agent what it reads and writes and nothing else: get nodes, list pods, create events', () => {
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'osm-healthcheck-node');
    expect(grants(role as Manifest)).toEqual(['/events[*] create', '/nodes[*] get', '/pods[*] list']);
    const binding = objects.find(
      (o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'osm-healthcheck-node',
    );
    expect(binding?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'osm-healthcheck-node', namespace: 'kube-system' },
    ]);
    expect(
      objects.find((o) => o.kind === 'ServiceAccount' && o.metadata.name === 'osm-healthcheck-node')?.metadata
        .namespace,
    ).toBe('kube-system');
  });

  it('tells the webhook to seal', () => {
    const webhook = objects.find((o) => o.kind === 'Deployment') as Manifest;
    expect(webhook.spec.template.spec.containers[0].env).toContainEqual({
      name: 'OSM_HEALTHCHECK_SEAL',
      value: 'node',
    });
  });
});
