// The pure decisions of `analyze --pre`: which webhooks take pods and in what order, what the install creates
// (held to deploy/webhook), the verdict on the rights, what the rewrite makes of the sample in a namespace, and
// the verdict on the dry runs.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Knowledge } from '../../src/analyze/cluster-reads.js';
import { namespacesCheck } from '../../src/analyze/pre.js';
import {
  injectSample,
  type NamespaceFacts,
  optionsFor,
  rulesCheck,
} from '../../src/analyze/pre-namespaces.js';
import { judgeTrials, policiesOnPods, untestedCheck } from '../../src/analyze/pre-policies.js';
import {
  type Access,
  type Answer,
  installCreates,
  installGrants,
  rightsChecks,
} from '../../src/analyze/pre-rights.js';
import { matchesPodCreate, meshOf, podWebhooks, webhookOrderChecks } from '../../src/analyze/pre-webhooks.js';
import { webhookSettings } from '../../src/analyze/webhook-settings.js';
import { enforcedPolicy } from '../../src/rewrite/pod-security.js';

type Json = Record<string, unknown>;

const POD_RULE = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };

describe('matchesPodCreate', () => {
  it.each([
    [POD_RULE, true],
    [{ ...POD_RULE, operations: ['*'] }, true],
    [{ ...POD_RULE, resources: ['*/*'] }, true],
    [{ ...POD_RULE, apiGroups: ['*'], apiVersions: ['*'] }, true],
    [{ ...POD_RULE, operations: ['UPDATE'] }, false],
    [{ ...POD_RULE, resources: ['pods/status'] }, false],
    [{ ...POD_RULE, apiGroups: ['apps'] }, false],
    [{ ...POD_RULE, scope: 'Cluster' }, false],
  ])('%j -> %s', (rule, expected) => {
    expect(matchesPodCreate(rule)).toBe(expected);
  });
});

describe('meshOf', () => {
  it.each([
    ['istio-sidecar-injector', 'namespace.sidecar-injector.istio.io', 'Istio'],
    ['istio-sidecar-injector-canary', 'rev.namespace.sidecar-injector.istio.io', 'Istio'],
    ['linkerd-proxy-injector-webhook-config', 'linkerd-proxy-injector.linkerd.io', 'Linkerd'],
    ['kuma-admission-mutating-webhook-configuration', 'kuma-injector.kuma.io', 'Kuma'],
    ['consul-consul-connect-injector', 'consul-connect-injector.consul.hashicorp.com', 'Consul'],
    ['osm-webhook-osm', 'osm-inject.k8s.io', 'osm-edge or OSM'],
    ['vault-agent-injector-cfg', 'vault.hashicorp.com', undefined],
  ])('%s / %s -> %s', (config, webhook, mesh) => {
    expect(meshOf(config, webhook)).toBe(mesh);
  });
});

const configuration = (name: string, webhooks: Json[]): Json => ({ metadata: { name }, webhooks });
const hook = (name: string, extra: Json = {}): Json => ({ name, rules: [POD_RULE], ...extra });

describe('podWebhooks and their order against ours', () => {
  const labelled: { name: string; labels: Record<string, string> }[] = [
    { name: 'shop', labels: { 'osm-healthcheck-injection': 'enabled', 'istio-injection': 'enabled' } },
    { name: 'bank', labels: { 'osm-healthcheck-injection': 'enabled' } },
  ];
  const all = [
    configuration('zz-last', [hook('z.example.com', { reinvocationPolicy: 'IfNeeded' })]),
    configuration('osm-healthcheck', [hook('inject.osm-healthcheck.io')]),
    configuration('istio-sidecar-injector', [
      hook('namespace.sidecar-injector.istio.io', {
        namespaceSelector: { matchLabels: { 'istio-injection': 'enabled' } },
      }),
      { name: 'services.example.com', rules: [{ ...POD_RULE, resources: ['services'] }] },
    ]),
  ];

  it('sorts by configuration name, leaves ours and non-pod webhooks out, and reads the selector', () => {
    const found = podWebhooks(all, 'osm-healthcheck', labelled);
    expect(found.map((w) => [w.config, w.webhook, w.before, w.mesh, w.namespaces])).toEqual([
      ['istio-sidecar-injector', 'namespace.sidecar-injector.istio.io', true, 'Istio', ['shop']],
      ['zz-last', 'z.example.com', false, undefined, ['shop', 'bank']],
    ]);
    expect(found.map((w) => [w.reinvocation, w.failurePolicy])).toEqual([
      ['Never', 'Fail'],
      ['IfNeeded', 'Fail'],
    ]);
  });

  it('warns only of a mesh injector after ours in a labelled namespace when ours is not called again', () => {
    const after = [
      configuration('osm-webhook-osm', [hook('osm-inject.k8s.io')]),
      configuration('zz-other', [hook('z.example.com')]),
    ];
    const found = podWebhooks(after, 'osm-healthcheck', labelled);
    const statuses = (reinvocation: string) =>
      webhookOrderChecks(found, { config: 'osm-healthcheck', reinvocation }).map((c) => c.status);
    expect(statuses('IfNeeded')).toEqual(['ok', 'ok']);
    expect(statuses('Never')).toEqual(['warn', 'ok']);
    const none = webhookOrderChecks([], { config: 'osm-healthcheck', reinvocation: 'IfNeeded' });
    expect(none.map((c) => [c.status, c.detail])).toEqual([
      ['ok', expect.stringContaining('ours is the only one')],
    ]);
  });
});

describe('what the install creates and grants', () => {
  const documents = ['namespace', 'rbac', 'deployment', 'service', 'mutating-webhook'].flatMap((file) =>
    parseAllDocuments(
      readFileSync(new URL(`../../deploy/webhook/${file}.yaml`, import.meta.url), 'utf8'),
    ).map((d) => d.toJSON() as Json),
  );

  it('is every kind deploy/webhook creates, in its namespace or cluster-wide as there', () => {
    const plural: Record<string, string> = {
      Namespace: 'namespaces',
      ServiceAccount: 'serviceaccounts',
      Role: 'roles',
      RoleBinding: 'rolebindings',
      ClusterRole: 'clusterroles',
      ClusterRoleBinding: 'clusterrolebindings',
      Deployment: 'deployments',
      PodDisruptionBudget: 'poddisruptionbudgets',
      Service: 'services',
      MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
    };
    const fromManifests = new Set(
      documents.map((d) => {
        const namespace = (d.metadata as Json).namespace;
        const group = String(d.apiVersion).includes('/') ? String(d.apiVersion).split('/')[0] : '';
        return `${group}/${plural[String(d.kind)] ?? d.kind}@${namespace ?? ''}`;
      }),
    );
    const listed = new Set(
      installCreates('osm-healthcheck').map((a) => `${a.group}/${a.resource}@${a.namespace ?? ''}`),
    );
    expect(listed).toEqual(fromManifests);
  });

  it("grants exactly the rules of the webhook's Role and ClusterRole", () => {
    const granted = documents
      .filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole')
      .flatMap((d) =>
        (d.rules as Json[]).flatMap((rule) =>
          (rule.resources as string[]).flatMap((resource) =>
            (rule.verbs as string[]).flatMap((verb) =>
              ((rule.resourceNames as string[] | undefined) ?? [undefined]).map(
                (name) =>
                  `${verb} ${(rule.apiGroups as string[])[0]}/${resource}/${name ?? ''}@${d.kind === 'Role' ? (d.metadata as Json).namespace : ''}`,
              ),
            ),
          ),
        ),
      );
    const listed = installGrants('osm-healthcheck', 'osm-healthcheck').map(
      (a) => `${a.verb} ${a.group}/${a.resource}/${a.name ?? ''}@${a.namespace ?? ''}`,
    );
    expect(new Set(listed)).toEqual(new Set(granted));
  });
});

describe('rightsChecks', () => {
  const create: Access = {
    verb: 'create',
    group: 'apps',
    resource: 'deployments',
    namespace: 'osm-healthcheck',
  };
  const grant: Access = { verb: 'list', group: '', resource: 'nodes' };
  const yes: Answer = { allowed: true };
  const no: Answer = { allowed: false };
  it.each<[string, Answer, Answer, Answer[] | undefined, string[]]>([
    ['all allowed', yes, yes, undefined, ['ok']],
    ['a create denied', no, yes, undefined, ['fail']],
    ['a grant not held, no escalate', yes, no, [no, yes], ['ok', 'fail']],
    ['a grant not held, escalate on both', yes, no, [yes, yes], ['ok']],
  ])('%s', (_, c, g, escalate, statuses) => {
    const checks = rightsChecks([[create, c]], [[grant, g]], escalate);
    expect(checks.map((x) => x.status)).toEqual(statuses);
  });
  it('names the right each denial is about', () => {
    const [check] = rightsChecks([[create, no]], [], undefined);
    expect(check?.detail).toContain('create deployments.apps in osm-healthcheck');
  });
  it('skips, naming the right, where the review itself is refused', () => {
    const checks = rightsChecks(
      [[create, { unknown: 'needs create selfsubjectaccessreviews' }]],
      [],
      undefined,
    );
    expect(checks.map((c) => [c.status, c.detail])).toEqual([
      ['skip', 'cannot check whether you may install: needs create selfsubjectaccessreviews'],
    ]);
  });
});

describe('the sample in a namespace', () => {
  const knowledge: Knowledge = {
    cluster: { state: 'known', version: { major: 1, minor: 34 }, sidecarGate: false },
    kubelets: { state: 'known', version: { major: 1, minor: 34 }, source: 'the only node ("n1")' },
    settings: webhookSettings({}),
  };
  const facts = (labels: Record<string, string>, rules?: NamespaceFacts['rules']): NamespaceFacts => ({
    name: 'shop',
    policy: enforcedPolicy(labels, 'privileged', 'shop'),
    rules,
  });
  const containers = (pod: Json) => {
    const spec = pod.spec as { initContainers?: Json[]; containers?: Json[] };
    return [...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c) => c.name);
  };
  const none = { limitRanges: [], resourceQuotas: [] };

  it.each([
    ['privileged', {}, ['osm-healthcheck-init', 'osm-healthcheck', 'app']],
    ['baseline', { 'pod-security.kubernetes.io/enforce': 'baseline' }, ['osm-healthcheck', 'app']],
    ['restricted', { 'pod-security.kubernetes.io/enforce': 'restricted' }, ['osm-healthcheck', 'app']],
  ])('%s: injected with what the level admits, as a native sidecar on 1.34', (_, labels, expected) => {
    const f = facts(labels, none);
    const sample = injectSample(f, optionsFor(f, knowledge));
    expect(sample.injected).toBe(true);
    expect(containers(sample.pod)).toEqual(expected);
    expect(rulesCheck(f, sample, 'list').detail).toBe(
      `shop: no LimitRange or ResourceQuota; the companion gets its defaults (requests cpu 50m, memory 32Mi; limits memory 320Mi)${expected.length === 3 ? ', the init container the same' : ', no init container'}`,
    );
  });

  it('a LimitRange max: the companion fitted to it', () => {
    const limitRange = {
      metadata: { name: 'lr' },
      spec: { limits: [{ type: 'Container', max: { memory: '100Mi' } }] },
    };
    const f = facts({}, { limitRanges: [limitRange], resourceQuotas: [] });
    const check = rulesCheck(f, injectSample(f, optionsFor(f, knowledge)), 'list');
    expect([check.status, check.detail]).toEqual([
      'ok',
      expect.stringContaining(
        'LimitRange lr; the companion gets requests cpu 50m, memory 32Mi; limits memory 100Mi (fitted',
      ),
    ]);
  });

  it('a quota without room: untouched, a warning that names it', () => {
    const quota = {
      metadata: { name: 'full', namespace: 'shop' },
      spec: { hard: { 'requests.memory': '100Mi' } },
      status: { hard: { 'requests.memory': '100Mi' }, used: { 'requests.memory': '80Mi' } },
    };
    const f = facts({}, { limitRanges: [], resourceQuotas: [quota] });
    const sample = injectSample(f, optionsFor(f, knowledge));
    expect(sample.injected).toBe(false);
    expect(sample.cause).toBe('admission-rules');
    const check = rulesCheck(f, sample, 'list');
    expect(check.status).toBe('warn');
    expect(check.detail).toContain(
      'shop: ResourceQuota full; a pod with a probe is left untouched: ResourceQuota "full"',
    );
  });

  it('rules it may not read: a skip naming the right, the defaults for the dry run', () => {
    const f = facts({});
    const sample = injectSample(f, optionsFor(f, knowledge));
    expect(sample.injected).toBe(true);
    expect(rulesCheck(f, sample, 'list limitranges and resourcequotas cluster-wide')).toEqual({
      section: 'pre',
      name: 'namespace-rules',
      status: 'skip',
      detail:
        "cannot check shop's LimitRanges and ResourceQuotas and what the fit does with them: needs list limitranges and resourcequotas cluster-wide",
    });
  });
});

describe('the verdict on the dry runs', () => {
  const refused = { admitted: false as const, message: "ValidatingAdmissionPolicy 'cpu' denied request" };
  it.each([
    ['admitted', { admitted: true as const }, undefined, undefined, 'ok'],
    ['refused, and so is the pod alone', refused, refused, undefined, 'warn'],
    ['refused, the pod alone admitted', refused, { admitted: true as const }, undefined, 'fail'],
  ])('%s -> %s', (_, withCompanion, plain, limited, status) => {
    expect(judgeTrials('shop', withCompanion, plain, limited).status).toBe(status);
  });
  it('says when a CPU limit would get the pod in', () => {
    const check = judgeTrials(
      'shop',
      refused,
      { admitted: true },
      { limit: '500m', trial: { admitted: true } },
    );
    expect(check.detail).toMatch(
      /ValidatingAdmissionPolicy 'cpu' denied request; with --companion-cpu-limit 500m it is admitted/,
    );
  });
  it('without create on pods: the policies on pods listed, untested', () => {
    const policies = policiesOnPods([
      { metadata: { name: 'cpu' }, spec: { matchConstraints: { resourceRules: [POD_RULE] } } },
      {
        metadata: { name: 'deployments' },
        spec: {
          matchConstraints: {
            resourceRules: [{ ...POD_RULE, apiGroups: ['apps'], resources: ['deployments'] }],
          },
        },
      },
    ]);
    expect(policies).toEqual(['cpu']);
    expect(untestedCheck('shop', { state: 'listed', version: 'v1', onPods: policies }).status).toBe('warn');
    expect(untestedCheck('shop', { state: 'listed', version: 'v1', onPods: [] }).status).toBe('ok');
    expect(untestedCheck('shop', { state: 'forbidden' }).detail).toBe(
      'cannot check the admission policies on pods in shop: needs create on pods in shop (a server-side dry run: nothing is stored), or list validatingadmissionpolicies',
    );
  });
});

describe('namespacesCheck', () => {
  it.each([
    [['a', 'b'], undefined, true, 'ok'],
    [[], undefined, true, 'warn'],
    [['x'], 'x', false, 'warn'],
  ])('%j (-n %s) -> %s', (names, namespace, selected, status) => {
    expect(
      namespacesCheck(names, 'osm-healthcheck-injection=enabled', "the manifests'", namespace, selected)
        .status,
    ).toBe(status);
  });
});
