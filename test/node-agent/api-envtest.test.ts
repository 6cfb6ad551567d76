// The node agent's API access on a real kube-apiserver (each of ../shared/envtest's), as the ServiceAccount that
// deploy/node/rbac.yaml binds: it reads its node's pod networks (and says what is missing, or what RBAC refused),
// finds the pod behind a proof's caller address with the field selectors the API server supports, and posts that
// pod's Sealed or NotSealed event, which the API server validates and stores. One event per address a minute;
// nothing for a pod that does not ask to be sealed, nor for one of another node.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { isHealthcheckError } from '../../src/errors.js';
import { inClusterClient } from '../../src/kube/api/in-cluster.js';
import { fetchPodCidrs } from '../../src/node/node-pod-cidrs.js';
import { sealEvents } from '../../src/node/seal-events.js';
import { ROOT } from '../helpers/cli.js';
import {
  ENVTEST_SERVERS,
  type Envtest,
  type EnvtestUser,
  envtestNeeds,
  startEnvtest,
} from '../helpers/envtest.js';
import { captureLog } from '../helpers/log-capture.js';
import { recordValue } from '../helpers/records.js';
import { skipWithout } from '../helpers/system-tools.js';
import { until } from '../helpers/until.js';

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: manifests, walked by the field names Kubernetes defines
type Manifest = Record<string, any>;

const rbac = parseAllDocuments(readFileSync(`${ROOT}deploy/node/rbac.yaml`, 'utf8')).map(
  (d) => d.toJS() as Manifest,
);
const account = rbac.find((o) => o.kind === 'ServiceAccount') as Manifest;
const serviceAccount = (name: string): EnvtestUser => ({
  name: `system:serviceaccount:kube-system:${name}`,
  groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system'],
});
const AGENT = serviceAccount(account.metadata.name);
const UNBOUND = serviceAccount('unbound');
const NS = 'shop';
const RECORD = recordValue();

describe.each(ENVTEST_SERVERS.map((server) => ({ server, version: server.version })))(
  'the node agent on kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(`the node agent's API access on kube-apiserver ${server.version}`, [
      ...envtestNeeds(server),
    ]);
    let env: Envtest;
    const clientOf = (user: EnvtestUser) =>
      inClusterClient({ url: env.url, caFile: env.caFile, tokenFile: env.tokenFile(user.name) });

    async function node(name: string, podCIDRs: string[] | undefined): Promise<void> {
      await env.admin.create('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name },
        spec: podCIDRs === undefined ? {} : { podCIDR: podCIDRs[0], podCIDRs },
      });
    }

    /** A pod on `nodeName` with `ip`, its status written as kubelet writes it. */
    async function pod(name: string, nodeName: string, ip: string, sealed = true): Promise<Json> {
      const path = `/api/v1/namespaces/${NS}/pods`;
      const created = await env.admin.create(path, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, annotations: sealed ? { 'osm-healthcheck/status': RECORD } : {} },
        spec: { nodeName, containers: [{ name: 'app', image: 'app:1' }] },
      });
      return env.admin.put(`${path}/${name}/status`, {
        ...created,
        status: { phase: 'Pending', hostIP: '10.0.0.1', podIP: ip, podIPs: [{ ip }] },
      });
    }

    const events = async (): Promise<Json[]> =>
      ((await env.admin.get(`/api/v1/namespaces/${NS}/events`)).items as Json[]).filter(
        (e) => (e.source as Json | undefined)?.component === 'osm-healthcheck-node',
      );

    beforeAll(async () => {
      if (skip) return;
      env = await startEnvtest([AGENT, UNBOUND], server);
      const RBAC = '/apis/rbac.authorization.k8s.io/v1';
      for (const o of rbac) {
        if (o.kind === 'ClusterRole') await env.admin.create(`${RBAC}/clusterroles`, o);
        if (o.kind === 'ClusterRoleBinding') await env.admin.create(`${RBAC}/clusterrolebindings`, o);
      }
      await env.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NS },
      });
      await node('node-a', ['10.88.1.0/24', 'fd00:88:1::/64']);
      await node('node-b', undefined);
    }, 60_000);
    afterAll(async () => {
      await env?.stop();
    });

    it.skipIf(skip)("reads its node's pod networks, both families", async () => {
      const cidrs = await fetchPodCidrs(clientOf(AGENT), 'node-a');
      expect(cidrs.map((c) => c.text)).toEqual(['10.88.1.0/24', 'fd00:88:1::/64']);
    });

    it.skipIf(skip)(
      'says what is missing: a node without networks, a node that is not there, a grant',
      async () => {
        const failure = (name: string, user = AGENT) =>
          fetchPodCidrs(clientOf(user), name).then(
            () => 'no error',
            (err: Error) => `${isHealthcheckError(err) ? err.code : 'plain'}: ${err.message}`,
          );
        expect(await failure('node-b')).toBe(
          'OSM_HC_NODE: node node-b has no spec.podCIDRs: its CNI assigns pod addresses itself; give its pod networks with --pod-cidr (env OSM_HEALTHCHECK_POD_CIDR)',
        );
        expect(await failure('node-z')).toBe(
          `OSM_HC_NODE: cannot read node node-z's pod networks: NotFound: nodes "node-z" not found`,
        );
        expect(await failure('node-a', UNBOUND)).toMatch(
          /^OSM_HC_NODE: cannot read node node-a's pod networks: Forbidden: .*cannot get resource "nodes".* \(the agent needs get on nodes: deploy\/node\/rbac\.yaml\)$/,
        );
      },
    );

    it.skipIf(skip)(
      "posts a proof's pod its Sealed or NotSealed event, once a minute per address, and only to a pod of its node that asks",
      async () => {
        const sealed = await pod('web', 'node-a', '10.88.1.7');
        const open = await pod('cni', 'node-a', '10.88.1.8');
        await pod('plain', 'node-a', '10.88.1.9', false);
        await pod('far', 'node-b', '10.88.1.10');
        const capture = captureLog();
        const agent = sealEvents(clientOf(AGENT), 'node-a', capture.log);
        agent.proved('10.88.1.7', '169.254.7.127');
        agent.proved('10.88.1.7', '169.254.7.127');
        agent.proved('10.88.1.8', '10.88.1.1');
        agent.proved('10.88.1.9', '169.254.7.127');
        agent.proved('10.88.1.10', '169.254.7.127');
        let posted: Json[] = [];
        await until(
          'two events',
          async () => {
            posted = await events();
            return posted.length >= 2;
          },
          () => JSON.stringify(capture.lines),
        );
        await capture.line((l) =>
          String(l.msg).includes('shop/plain at 10.88.1.9 does not ask to be sealed'),
        );
        await capture.line((l) => String(l.msg).includes('0 pods of node-a have the address 10.88.1.10'));
        posted = await events();
        const on = (pod: Json) =>
          posted.filter((e) => (e.involvedObject as Json).uid === (pod.metadata as Json).uid);
        expect(posted).toHaveLength(2);
        expect(on(sealed)).toEqual([
          expect.objectContaining({
            reason: 'Sealed',
            type: 'Normal',
            involvedObject: expect.objectContaining({ kind: 'Pod', name: 'web', namespace: NS }),
            message: expect.stringMatching(/^sealed: /),
            source: { component: 'osm-healthcheck-node', host: 'node-a' },
            count: 1,
          }),
        ]);
        expect(on(open)).toEqual([
          expect.objectContaining({
            reason: 'NotSealed',
            type: 'Warning',
            message: expect.stringContaining("the node agent's connection arrived from 10.88.1.1"),
          }),
        ]);
        expect(capture.lines.filter((l) => l.level === 'warn')).toEqual([]);
      },
    );

    it.skipIf(skip)(
      'without the grants it posts nothing and says why, once per proof, and never throws',
      async () => {
        const capture = captureLog();
        sealEvents(clientOf(UNBOUND), 'node-a', capture.log).proved('10.88.1.7', '169.254.7.127');
        const warning = await capture.line((l) => l.level === 'warn');
        expect(warning).toMatchObject({ msg: 'cannot post the seal event; init and analyze still say it' });
        expect(String(warning.err)).toMatch(
          /^list pods \(spec\.nodeName=node-a,status\.podIP=10\.88\.1\.7\): Forbidden: /,
        );
      },
    );
  },
);
