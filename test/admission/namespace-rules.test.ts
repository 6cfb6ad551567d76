// Issue 26 against a real kube-apiserver (test/helpers/envtest.ts): for each namespace rule and pod of the issue's
// table, a pod the API server admits on its own is admitted once the rewrite has been through it, with the
// companion where it fits, else untouched with a warning that names the rule; hostNetwork and Windows pods are
// never changed. The rules are created for real and read back as the webhook would know them; LimitRanger,
// ResourceQuota, PodSecurity, ValidatingAdmissionPolicy and pod-level validation are the API server's own.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RewriteOptions } from '../../src/rewrite/types.js';
import { runCli } from '../helpers/cli.js';
import { ENVTEST_NEEDS, type Envtest, startEnvtest } from '../helpers/envtest.js';
import {
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

const skip = skipWithout('admission against a real kube-apiserver (namespace rules)', ENVTEST_NEEDS);

let env: Envtest;

beforeAll(async () => {
  if (skip) return;
  env = await startEnvtest();
  for (const [index, c] of RULE_CASES.entries()) {
    const namespace = `rule-${index}`;
    await makeNamespace(env.admin, namespace, c.labels ?? {}, c.rules(namespace));
    if (c.settles) await untilRefused(env.admin, namespace, RULE_PROBE);
  }
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

describe.skipIf(skip)('a pod admitted without us is admitted with us (real kube-apiserver)', () => {
  const cases = RULE_CASES.flatMap((c, index) =>
    [false, true].map((nativeSidecar) => ({
      ...c,
      namespace: `rule-${index}`,
      nativeSidecar,
      placement: nativeSidecar ? 'a native sidecar' : 'first',
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
      if (untouched) {
        expect(injected).toEqual(original);
        expect(result.warnings.join('\n'), 'a warning naming the rule').toMatch(names);
      }
    },
  );
});

describe.skipIf(skip)('inject --namespace-rules, the objects as kubectl get -o yaml writes them', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'osm-hc-rules-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
      const args = ['inject', '-o', 'json', '--kube-version', '1.36', '--namespace-rules', file];
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

describe.skipIf(skip)('a policy we cannot read (ValidatingAdmissionPolicy)', () => {
  const namespace = 'vap';
  beforeAll(async () => {
    const rules = vapRules(namespace);
    await makeNamespace(env.admin, namespace, {}, rules);
    await untilRefused(env.admin, namespace, RULE_PROBE);
  });

  const run = async (options: Partial<RewriteOptions>) => {
    const original = appPod();
    const before = await env.admin.dryRunPod(namespace, original);
    expect(before.admitted ? 'admitted' : before.message, 'the original pod (precondition)').toBe('admitted');
    const { pod } = injectPod(original, factsOptions(await namespaceFacts(env.admin, namespace), options));
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
});
