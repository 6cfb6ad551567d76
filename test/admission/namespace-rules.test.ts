// The namespace rules of test/admission/rule-cases.ts against each real kube-apiserver the project is checked on
// (test/helpers/envtest.ts: 1.26, 1.32, 1.36): a pod the API server admits on its own is admitted once the rewrite
// has been through it, told that API server's version, with the companion where it fits (placed as that version
// allows), else untouched with a warning that names the rule; hostNetwork and Windows pods are never changed. The rules are created for real and read back as the webhook would know them; LimitRanger,
// ResourceQuota, PodSecurity, ValidatingAdmissionPolicy and pod-level validation are the API server's own.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RewriteOptions } from '../../src/rewrite/types.js';
import { runCli } from '../helpers/cli.js';
import { ENVTEST_SERVERS, type Envtest, envtestNeeds, startEnvtest } from '../helpers/envtest.js';
import {
  companionPlacement,
  factsOptions,
  injectPod,
  makeNamespace,
  namespaceFacts,
  ourContainers,
  type Pod,
  untilRefused,
} from '../helpers/envtest-namespace.js';
import { skipWithout } from '../helpers/system-tools.js';
import { appPod, RULE_CASES, RULE_PROBE, vapRules } from './rule-cases.js';

const VAP_NAMESPACE = 'vap';

describe.each(ENVTEST_SERVERS.map((server) => ({ server, version: server.version })))(
  'kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(
      `admission against a real kube-apiserver ${server.version} (namespace rules)`,
      envtestNeeds(server),
    );

    let env: Envtest;
    // The rule files inject reads.
    let dir: string;

    beforeAll(async () => {
      if (skip) return;
      env = await startEnvtest([], server);
      dir = mkdtempSync(join(tmpdir(), 'osm-hc-rules-'));
      for (const [index, c] of RULE_CASES.entries()) {
        const namespace = `rule-${index}`;
        await makeNamespace(env.admin, namespace, c.labels ?? {}, c.rules(namespace));
        if (c.settles) await untilRefused(env.admin, namespace, RULE_PROBE);
      }
      if (server.minor >= 30) {
        await makeNamespace(env.admin, VAP_NAMESPACE, {}, vapRules(VAP_NAMESPACE));
        await untilRefused(env.admin, VAP_NAMESPACE, RULE_PROBE);
      }
    }, 120_000);
    afterAll(async () => {
      await env?.stop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    describe.skipIf(skip)('a pod admitted without us is admitted with us (real kube-apiserver)', () => {
      const cases = RULE_CASES.flatMap((c, index) =>
        [false, true].map((nativeSidecar) => ({
          ...c,
          namespace: `rule-${index}`,
          nativeSidecar,
          // --placement native-sidecar gives one where the API server has them (1.29+), else the companion first.
          placement: nativeSidecar
            ? `native-sidecar (${server.minor >= 29 ? 'one' : 'first: none before 1.29'})`
            : 'first',
        })),
      );
      it.each(cases)(
        '$name, companion $placement',
        async ({ namespace, pod, expected, names, options: given, nativeSidecar }) => {
          const options = {
            ...given,
            placement: nativeSidecar ? ('native-sidecar' as const) : ('first' as const),
          };
          const original = pod ?? appPod();
          const before = await env.admin.dryRunPod(namespace, original);
          expect(before.admitted ? 'admitted' : before.message, 'the original pod (precondition)').toBe(
            'admitted',
          );

          const facts = await namespaceFacts(env.admin, namespace);
          if (expected === 'annotation') {
            expect(() => injectPod(original, factsOptions(facts, options))).toThrow(names);
            return;
          }
          const { pod: injected, result } = injectPod(original, factsOptions(facts, options));
          const after = await env.admin.dryRunPod(namespace, injected);
          expect(after.admitted ? 'admitted' : after.message, 'the injected pod').toBe('admitted');

          const ours = ourContainers(injected);
          const untouched = !result.changed;
          if (expected === 'companion') expect(ours).toContain('osm-healthcheck');
          if (expected === 'untouched') expect(untouched, 'left untouched').toBe(true);
          if (ours.includes('osm-healthcheck')) {
            const native = nativeSidecar && server.minor >= 29;
            expect(companionPlacement(injected), 'the placement this version gets').toBe(
              native ? 'native-sidecar' : 'first',
            );
          }
          if (untouched) {
            expect(injected).toEqual(original);
            expect(result.warnings.join('\n'), 'a warning naming the rule').toMatch(names);
          }
        },
      );
    });

    describe.skipIf(skip)('inject --namespace-rules, the objects as kubectl get -o yaml writes them', () => {
      it.each(RULE_CASES.map((c, index) => ({ ...c, namespace: `rule-${index}` })))(
        '$name',
        async ({ namespace, pod, expected, names, labels }) => {
          const original = pod ?? appPod();
          const facts = await namespaceFacts(env.admin, namespace);
          const file = join(dir, `${namespace}.yaml`);
          const items = [
            ...facts.limitRanges.map((o) => ({ apiVersion: 'v1', kind: 'LimitRange', ...o })),
            ...facts.resourceQuotas.map((o) => ({ apiVersion: 'v1', kind: 'ResourceQuota', ...o })),
          ];
          writeFileSync(file, stringify({ apiVersion: 'v1', kind: 'List', items }));
          const level = labels?.['pod-security.kubernetes.io/enforce'];
          const args = ['inject', '-o', 'json', '--kube-version', server.version, '--namespace-rules', file];
          const run = await runCli([...args, ...(level ? ['--pod-security', level] : [])], {
            input: JSON.stringify(original),
          });
          if (expected === 'annotation') {
            expect({ code: run.code, stderr: run.stderr }).toMatchObject({
              code: 1,
              stderr: expect.stringMatching(names),
            });
            return;
          }
          expect(run.code, run.stderr).toBe(0);
          const injected = JSON.parse(run.stdout) as Pod;
          const after = await env.admin.dryRunPod(namespace, injected);
          expect(after.admitted ? 'admitted' : after.message, 'the injected pod').toBe('admitted');
          const ours = ourContainers(injected);
          if (expected === 'companion') expect(ours).toContain('osm-healthcheck');
          if (expected === 'untouched') expect(ours).toEqual([]);
          if (ours.length === 0) expect(run.stderr, 'a warning naming the rule').toMatch(names);
        },
      );
    });

    // admissionregistration.k8s.io/v1's ValidatingAdmissionPolicy is served from 1.30 (1.26: v1alpha1 behind a gate).
    describe.skipIf(skip || server.minor < 30)(
      'a policy we cannot read (ValidatingAdmissionPolicy, 1.30+)',
      () => {
        const namespace = VAP_NAMESPACE;

        const run = async (options: Partial<RewriteOptions>) => {
          const original = appPod();
          const before = await env.admin.dryRunPod(namespace, original);
          expect(before.admitted ? 'admitted' : before.message, 'the original pod (precondition)').toBe(
            'admitted',
          );
          const { pod } = injectPod(
            original,
            factsOptions(await namespaceFacts(env.admin, namespace), options),
          );
          return { pod, after: await env.admin.dryRunPod(namespace, pod) };
        };

        it('refuses the default companion (no CPU limit): the documented reason for the cluster-wide setting', async () => {
          const { after } = await run({});
          expect(after.admitted ? 'admitted' : after.message).toMatch(
            /ValidatingAdmissionPolicy 'limits-required' with binding 'limits-required' denied request: every container must set cpu and memory limits/,
          );
        });

        it('admits the companion with the cluster-wide CPU limit (companionCpuLimit)', async () => {
          const { pod, after } = await run({ companionCpuLimit: '200m' });
          expect(after.admitted ? 'admitted' : after.message).toBe('admitted');
          expect(ourContainers(pod)).toEqual(['osm-healthcheck-init', 'osm-healthcheck']);
        });
      },
    );
  },
);
