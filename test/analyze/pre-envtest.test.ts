// `analyze --pre` (the built CLI, through a kubeconfig) against each real kube-apiserver the project is checked on
// (1.26, 1.32, 1.36), before the webhook is installed: labelled namespaces at each Pod Security level, one with a
// LimitRange the fit follows and a ResourceQuota with room, one whose quota leaves the companion none, a
// ValidatingAdmissionPolicy demanding CPU limits (1.30+), a node whose kubelet trails, two other mutating
// webhooks on pods named as Istio's and osm-edge's, and a user whose rights stop most checks, who is told which
// right each one needs and gets no stack trace.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Check } from '../../src/analyze/checks.js';
import type { PreReport } from '../../src/analyze/pre.js';
import { vapRules } from '../admission/rule-cases.js';
import { type Exit, runCli } from '../helpers/cli.js';
import { ENVTEST_SERVERS, type Envtest, envtestNeeds, startEnvtest } from '../helpers/envtest.js';
import { makeNamespace, untilRefused } from '../helpers/envtest-namespace.js';
import { kubeconfigFor } from '../helpers/kubeconfig.js';
import { skipWithout } from '../helpers/system-tools.js';

type Json = Record<string, unknown>;

const LABEL = { 'osm-healthcheck-injection': 'enabled' };
const ENFORCE = 'pod-security.kubernetes.io/enforce';
const LIMITED = { name: 'limited' };
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

/** A pod without a CPU limit: refused once the policy is in force. */
const UNLIMITED: Json = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { generateName: 'probe-' },
  spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
};

/** Another webhook on pods CREATE, at a URL never called: its namespaceSelector matches no namespace. */
function otherWebhook(config: string, webhook: string, reinvocation: string): Json {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: config },
    webhooks: [
      {
        name: webhook,
        clientConfig: { url: 'https://127.0.0.1:1/inject' },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        namespaceSelector: { matchLabels: { 'never-labelled': 'true' } },
        failurePolicy: 'Ignore',
        sideEffects: 'None',
        reinvocationPolicy: reinvocation,
        admissionReviewVersions: ['v1'],
      },
    ],
  };
}

const about = (report: PreReport, name: string, text: string): Check[] =>
  report.checks.filter((c) => c.name === name && c.detail.includes(text));

describe.each(ENVTEST_SERVERS.map((server) => ({ server, version: server.version })))(
  'analyze --pre against kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(
      `analyze --pre against a real kube-apiserver ${server.version}`,
      envtestNeeds(server),
    );
    const policies = server.minor >= 30;
    let env: Envtest;
    let dir: string;

    const pre = (user: 'admin' | 'limited', args: string[] = []): Promise<Exit> => {
      const file = join(dir, `${user}.kubeconfig`);
      const token = readFileSync(env.tokenFile(user), 'utf8').trim();
      writeFileSync(file, kubeconfigFor(env.url, token, env.caFile));
      return runCli(['analyze', '--pre', '--kubeconfig', file, ...args], { timeoutMs: 60_000 });
    };
    const json = async (user: 'admin' | 'limited') => {
      const exit = await pre(user, ['-o', 'json']);
      return { exit, report: JSON.parse(exit.stdout) as PreReport };
    };

    beforeAll(async () => {
      if (skip) return;
      env = await startEnvtest([LIMITED], server);
      dir = mkdtempSync(join(tmpdir(), 'osm-hc-pre-'));
      const admin = env.admin;
      await makeNamespace(admin, 'open', LABEL, [
        {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'lr-max' },
          spec: { limits: [{ type: 'Container', max: { memory: '128Mi' } }] },
        },
        {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'quota' },
          spec: { hard: { 'requests.cpu': '4', 'requests.memory': '4Gi' } },
        },
      ]);
      await makeNamespace(admin, 'base', { ...LABEL, [ENFORCE]: 'baseline' }, []);
      await makeNamespace(admin, 'strict', { ...LABEL, [ENFORCE]: 'restricted' }, []);
      // Room for the sample's own 16Mi, none for the companion's 32Mi.
      await makeNamespace(admin, 'tight', LABEL, [
        {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'nearly-full' },
          spec: { hard: { 'requests.memory': '100Mi' } },
          status: { used: { 'requests.memory': '80Mi' } },
        },
      ]);
      await makeNamespace(admin, 'vap', LABEL, policies ? vapRules('vap') : []);
      await makeNamespace(admin, 'elsewhere', {}, []);
      if (policies) await untilRefused(admin, 'vap', UNLIMITED);
      await admin.create(
        `${ADMISSION}/mutatingwebhookconfigurations`,
        otherWebhook('istio-sidecar-injector', 'namespace.sidecar-injector.istio.io', 'Never'),
      );
      await admin.create(
        `${ADMISSION}/mutatingwebhookconfigurations`,
        otherWebhook('osm-webhook-osm', 'osm-inject.k8s.io', 'IfNeeded'),
      );
      // A node whose kubelet trails the API server: no controller runs, so its status is ours to write.
      const node = await admin.create('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n1' },
      });
      await admin.put('/api/v1/nodes/n1/status', {
        ...node,
        status: { nodeInfo: { kubeletVersion: 'v1.25.4' } },
      });
      // The limited user reads namespaces, nothing else.
      await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'namespace-reader' },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
      });
      await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'namespace-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'namespace-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: LIMITED.name }],
      });
    }, 120_000);
    afterAll(async () => {
      await env?.stop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    it.skipIf(skip)(
      'reports each labelled namespace, the webhooks in order and the rights; exit 1 only for a policy the companion fails',
      async () => {
        const { exit, report } = await json('admin');
        expect(exit.code, exit.stderr).toBe(policies ? 1 : 0);
        expect(report.namespaces.map((n) => `${n.name}:${n.podSecurity}`)).toEqual([
          'base:baseline',
          'open:privileged',
          'strict:restricted',
          'tight:privileged',
          'vap:privileged',
        ]);
        expect(about(report, 'versions', `the API server runs ${server.version}`)[0]?.detail).toContain(
          'the only node ("n1") runs kubelet 1.25',
        );
        // Kubelet 1.25 has no native sidecars: first among the containers, and pods that must end are left alone.
        expect(about(report, 'placement', 'pods that keep running')[0]?.detail).toContain(
          'first among the containers',
        );
        expect(about(report, 'placement', 'pods that must end')[0]?.status).toBe('warn');
        expect(about(report, 'pod-security', 'base: Pod Security baseline')[0]?.status).toBe('warn');
        expect(about(report, 'pod-security', 'open: Pod Security privileged')[0]?.status).toBe('ok');
        const open = about(report, 'namespace-rules', 'open: ')[0];
        expect(open?.detail).toContain('LimitRange lr-max, ResourceQuota quota');
        expect(open?.detail).toContain('limits memory 128Mi (fitted');
        const tight = about(report, 'namespace-rules', 'tight: ')[0];
        expect(tight?.status).toBe('warn');
        expect(tight?.detail).toContain('ResourceQuota "nearly-full"');
        expect(about(report, 'admission-policies', 'tight: nothing of ours to test')[0]?.status).toBe('skip');
        for (const ns of ['open', 'base', 'strict']) {
          expect(about(report, 'admission-policies', `${ns}: `)[0]?.status, ns).toBe('ok');
        }
        const vap = about(report, 'admission-policies', 'vap: ')[0];
        if (policies) {
          expect(vap?.status).toBe('fail');
          expect(vap?.detail).toContain('limits-required');
          expect(vap?.detail).toContain('with --companion-cpu-limit 500m it is admitted');
        } else {
          expect(vap?.status).toBe('ok');
        }
        const webhooks = report.checks.filter((c) => c.name === 'other-webhooks').map((c) => c.detail);
        expect(webhooks).toHaveLength(2);
        expect(webhooks[0]).toMatch(
          /^Istio's injector namespace\.sidecar-injector\.istio\.io .* runs before ours/,
        );
        expect(webhooks[1]).toMatch(
          /^osm-edge or OSM's injector osm-inject\.k8s\.io .* runs after ours .*called again/,
        );
        expect(report.checks.filter((c) => c.name === 'install-rights').map((c) => c.status)).toEqual(['ok']);
        expect(report.checks.filter((c) => c.status === 'skip').map((c) => c.detail)).toEqual([
          expect.stringContaining('tight: nothing of ours to test'),
        ]);
      },
    );

    it.skipIf(skip)('prints the table a person reads', async () => {
      const exit = await pre('admin', ['-n', 'elsewhere']);
      expect(exit.code, exit.stderr).toBe(0);
      expect(exit.stdout).toContain('BEFORE INSTALL, namespace elsewhere');
      expect(exit.stdout).toMatch(
        /^namespaces +warn +elsewhere does not match the namespaceSelector osm-healthcheck-injection=enabled/m,
      );
      expect(exit.stdout).toMatch(/^CHECK +STATUS +DETAIL$/m);
      expect(exit.stdout.trimEnd().split('\n').at(-1)).toBe("Nothing stands in the install's way.");
    });

    it.skipIf(skip)('says which right each check it cannot make needs, and no stack trace', async () => {
      const { exit, report } = await json('limited');
      expect(exit.code).toBe(1);
      expect(exit.stderr).not.toMatch(/\n\s+at /);
      const skipped = report.checks.filter((c) => c.status === 'skip').map((c) => c.detail);
      expect(skipped).toContain("cannot check the kubelets' versions: needs list nodes");
      expect(skipped).toContain(
        'cannot check the other mutating webhooks on pods: needs list mutatingwebhookconfigurations',
      );
      expect(skipped).toContain(
        "cannot check open's LimitRanges and ResourceQuotas and what the fit does with them: needs list limitranges and resourcequotas cluster-wide",
      );
      expect(skipped).toContain(
        'cannot check the admission policies on pods in vap: needs create on pods in vap (a server-side dry run: nothing is stored), or list validatingadmissionpolicies',
      );
      const rights = report.checks.filter((c) => c.name === 'install-rights');
      expect(rights.map((c) => c.status)).toEqual(['fail', 'fail']);
      expect(rights[0]?.detail).toContain('create namespaces, create serviceaccounts in osm-healthcheck');
      expect(rights[1]?.detail).toContain('list nodes');
    });
  },
);
