// charts/osm-healthcheck with the real helm: it follows package.json, passes `helm lint --strict`, and renders, with
// the defaults and with every value set (test/fixtures/chart/every-value.yaml), objects that have the fields the
// API requires, each value where it belongs, and nothing Helm would take from the webhook (a Secret, a caBundle).

import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import pkg from '../../package.json' with { type: 'json' };
import { missingFields } from '../helpers/api-fields.js';
import { CHART, helm, NAMESPACE, renderChart, skipWithoutHelm } from '../helpers/helm.js';
import type { Manifest } from '../helpers/kustomize.js';
import { flag, matches } from '../webhook/deploy-manifests.js';

const EVERY_VALUE = new URL('../fixtures/chart/every-value.yaml', import.meta.url);
const everyValue = parse(readFileSync(EVERY_VALUE, 'utf8')) as Manifest;
const CLUSTER_SCOPED = ['MutatingWebhookConfiguration', 'ClusterRole', 'ClusterRoleBinding'];

const find = (objects: Manifest[], kind: string, name?: string): Manifest => {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Manifest;
};
const podSpec = (objects: Manifest[]): Manifest => find(objects, 'Deployment').spec.template.spec;
const container = (objects: Manifest[]): Manifest => podSpec(objects).containers[0];
const env = (c: Manifest, name: string): Manifest | undefined => c.env.find((e: Manifest) => e.name === name);
const webhooks = (objects: Manifest[]): Manifest[] => find(objects, 'MutatingWebhookConfiguration').webhooks;

describe('charts/osm-healthcheck/Chart.yaml', () => {
  it('is a Helm 3 chart whose version and appVersion are package.json’s', () => {
    const chart = parse(readFileSync(`${CHART}/Chart.yaml`, 'utf8')) as Manifest;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'osm-healthcheck', type: 'application' });
    expect(chart.version).toBe(pkg.version);
    expect(chart.appVersion).toBe(pkg.version);
  });
});

describe.skipIf(skipWithoutHelm('chart render tests'))('charts/osm-healthcheck rendered by helm', () => {
  let defaults: Manifest[];
  let every: Manifest[];
  beforeAll(async () => {
    [defaults, every] = await Promise.all([renderChart(), renderChart(everyValue)]);
  });

  it.each([
    { name: 'the defaults', args: [] },
    { name: 'cert-manager', args: ['--set', 'tls.certManager.enabled=true'] },
    { name: 'every value set', args: ['-f', EVERY_VALUE.pathname] },
  ])('helm lint --strict passes: $name', async ({ args }) => {
    const run = await helm(['lint', '--strict', CHART, ...args]);
    expect(run.stdout + run.stderr).toContain('0 chart(s) failed');
    expect(run.code).toBe(0);
  });

  it.each([
    { name: 'the defaults', objects: () => defaults },
    { name: 'every value set', objects: () => every },
  ])('$name: every object has the fields the API requires, in the release namespace', ({ objects }) => {
    expect(objects().flatMap(missingFields)).toEqual([]);
    for (const o of objects()) {
      const where = `${o.kind}/${o.metadata.name}`;
      if (CLUSTER_SCOPED.includes(o.kind)) expect(o.metadata.namespace, where).toBeUndefined();
      // The node agent runs beside kube-proxy: the release namespace is restricted (deploy/node/daemonset.yaml).
      else if (where === 'DaemonSet/osm-healthcheck-node' || where === 'ServiceAccount/osm-healthcheck-node')
        expect(o.metadata.namespace, where).toBe('kube-system');
      else expect(o.metadata.namespace, where).toBe(NAMESPACE);
    }
  });

  it.each([
    { name: 'the defaults', objects: () => defaults },
    { name: 'every value set', objects: () => every },
  ])(
    '$name: no Secret and no caBundle, so Helm never owns or blanks what the webhook writes',
    ({ objects }) => {
      expect(objects().filter((o) => o.kind === 'Secret')).toEqual([]);
      for (const webhook of webhooks(objects()))
        expect(Object.keys(webhook.clientConfig)).toEqual(['service']);
    },
  );

  it(`defaults: osm-healthcheck:${pkg.version} for the webhook and for what it injects, Kubernetes' pull policy`, () => {
    const c = container(defaults);
    expect(c.image).toBe(`osm-healthcheck:${pkg.version}`);
    expect(env(c, 'OSM_HEALTHCHECK_IMAGE')?.value).toBe(c.image);
    expect(c.imagePullPolicy).toBeUndefined();
  });

  it('every value: the image, its pull policy and secret, replicas and resources', () => {
    const c = container(every);
    const image = `${everyValue.image.repository}@${everyValue.image.digest}`;
    expect(c.image).toBe(image);
    expect(env(c, 'OSM_HEALTHCHECK_IMAGE')?.value).toBe(image);
    expect(c.imagePullPolicy).toBe('Always');
    expect(podSpec(every).imagePullSecrets).toEqual(everyValue.imagePullSecrets);
    expect(find(every, 'Deployment').spec.replicas).toBe(everyValue.replicas);
    expect(c.resources).toEqual(everyValue.resources);
  });

  it('every value: the flags of native sidecars; cert-manager files, not the flags of self-managed TLS', () => {
    const args = container(every).args as string[];
    expect(flag(args, '--placement')).toBe('native-sidecar');
    expect(args.filter((arg) => arg === '--placement')).toHaveLength(1);
    expect(args).not.toContain('--native-sidecar');
    expect(args).toContain('--sidecar-containers-gate');
    expect(flag(args, '--companion-cpu-limit')).toBe(everyValue.companion.cpuLimit);
    expect(container(defaults).args).not.toContain('--companion-cpu-limit');
    for (const selfManaged of ['--service', '--tls-secret', '--webhook-config']) {
      expect(args).not.toContain(selfManaged);
    }
    expect(flag(container(defaults).args, '--tls-secret')).toBe('osm-healthcheck-webhook-tls');
    // The default, auto, is the webhook's own: no flag, as deploy/webhook renders it (parity.test.ts).
    expect(container(defaults).args).not.toContain('--placement');
    expect(container(defaults).args).not.toContain('--native-sidecar');
    expect(container(defaults).args).not.toContain('--sidecar-containers-gate');
  });

  it.each([
    { name: 'auto, the default: no flag', values: { placement: 'auto' }, args: [] },
    { name: 'first', values: { placement: 'first' }, args: ['--placement', 'first'] },
    {
      name: 'native-sidecar',
      values: { placement: 'native-sidecar' },
      args: ['--placement', 'native-sidecar'],
    },
    {
      name: 'nativeSidecar.enabled alone, its older name',
      values: { nativeSidecar: { enabled: true } },
      args: ['--placement', 'native-sidecar'],
    },
  ])('placement $name', async ({ values, args }) => {
    const rendered = container(await renderChart(values)).args as string[];
    const at = rendered.indexOf('--placement');
    expect(at === -1 ? [] : rendered.slice(at, at + 2)).toEqual(args);
    expect(rendered).not.toContain('--native-sidecar');
  });

  it('every value: scheduling (node selector, tolerations, affinity, priority class) on the pod', () => {
    const spec = podSpec(every);
    expect(spec.nodeSelector).toEqual(everyValue.nodeSelector);
    expect(spec.tolerations).toEqual(everyValue.tolerations);
    expect(spec.affinity).toEqual(everyValue.affinity);
    expect(spec.priorityClassName).toBe(everyValue.priorityClassName);
    for (const key of ['nodeSelector', 'tolerations', 'affinity', 'priorityClassName', 'imagePullSecrets']) {
      expect(podSpec(defaults)[key], key).toBeUndefined();
    }
  });

  it('every value: common labels and annotations on every object, pod labels and annotations on the pod', () => {
    for (const o of every) {
      expect(o.metadata.labels, `${o.kind}/${o.metadata.name}`).toMatchObject(everyValue.commonLabels);
      expect(o.metadata.annotations, `${o.kind}/${o.metadata.name}`).toMatchObject(
        everyValue.commonAnnotations,
      );
    }
    const deployment = find(every, 'Deployment');
    const template = deployment.spec.template.metadata;
    expect(template.labels).toMatchObject({ ...everyValue.commonLabels, ...everyValue.podLabels });
    expect(template.annotations).toEqual(everyValue.podAnnotations);
    // The selector stays the chart's: adding labels never orphans the running pods.
    expect(deployment.spec.selector).toEqual(find(defaults, 'Deployment').spec.selector);
    expect(matches(deployment.spec.selector, template.labels)).toBe(true);
    for (const o of every.filter((x) => x.kind !== 'Deployment')) {
      expect(o.metadata.labels).not.toMatchObject(everyValue.podLabels);
    }
  });

  it('every value: the webhook entries take the selectors, failure policy (pods only) and timeout', () => {
    const [inject, warn] = webhooks(every) as [Manifest, Manifest];
    const { webhook } = everyValue;
    for (const entry of [inject, warn]) {
      expect(entry.namespaceSelector).toEqual({
        matchExpressions: webhook.namespaceSelector.matchExpressions,
      });
      expect(entry.objectSelector.matchLabels).toEqual(webhook.objectSelector.matchLabels);
      expect(entry.timeoutSeconds).toBe(webhook.timeoutSeconds);
    }
    expect(inject.failurePolicy).toBe('Fail');
    // Warnings never change an object: refusing one for want of a warning would be wrong.
    expect(warn.failurePolicy).toBe('Ignore');
  });

  it("an object selector of the user's narrows the pods but never lets the webhook's own pods in", () => {
    const selector = (webhooks(every)[0] as Manifest).objectSelector;
    const own = find(every, 'Deployment').spec.template.metadata.labels;
    expect(matches(selector, { ...own, inject: 'yes' })).toBe(false);
    expect(matches(selector, { app: 'web', inject: 'yes' })).toBe(true);
    expect(matches(selector, { app: 'web', inject: 'yes', 'osm-healthcheck/skip': '' })).toBe(false);
    expect(matches(selector, { app: 'web' })).toBe(false);
  });

  it('every value: cert-manager with your issuer: one Certificate, no Issuer of the chart, only its configuration by name and the list and watch rules', () => {
    expect(find(every, 'Certificate').spec.issuerRef).toEqual(everyValue.tls.certManager.issuerRef);
    expect(every.filter((o) => o.kind === 'Issuer')).toEqual([]);
    // The node agent's own (node.enabled, deploy/node/rbac.yaml) aside.
    const webhooks = every.filter((o) => o.metadata.name !== 'osm-healthcheck-node');
    expect(webhooks.filter((o) => /Role/.test(o.kind)).map((o) => o.kind)).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
    ]);
    expect(find(webhooks, 'ClusterRole').rules).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        resourceNames: ['osm-healthcheck'],
        verbs: ['get', 'update'],
      },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['limitranges', 'resourcequotas'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
    ]);
    expect(find(every, 'PodDisruptionBudget').spec.minAvailable).toBe(
      everyValue.podDisruptionBudget.minAvailable,
    );
  });

  it('a digest wins over the tag, for the webhook and for what it injects', async () => {
    const digest = `sha256:${'c'.repeat(64)}`;
    const c = container(
      await renderChart({ image: { repository: 'registry.example/hc', tag: '1.0', digest } }),
    );
    expect(c.image).toBe(`registry.example/hc@${digest}`);
    expect(env(c, 'OSM_HEALTHCHECK_IMAGE')?.value).toBe(c.image);
  });

  it('a namespace selector given without matchLabels: null keeps the default label too (Helm merges maps)', async () => {
    const objects = await renderChart({
      webhook: { namespaceSelector: { matchExpressions: [{ key: 'mesh', operator: 'Exists' }] } },
    });
    expect((webhooks(objects)[0] as Manifest).namespaceSelector).toEqual({
      matchLabels: { 'osm-healthcheck-injection': 'enabled' },
      matchExpressions: [{ key: 'mesh', operator: 'Exists' }],
    });
  });

  it.each([
    { name: 'self-managed TLS', values: {} },
    { name: 'cert-manager', values: { tls: { certManager: { enabled: true } } } },
  ])('another release namespace ($name): every reference to the namespace follows it', async ({ values }) => {
    const objects = await renderChart(values, ['--namespace', 'mesh-system']);
    const namespaces = new Set<string>();
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (typeof value === 'object' && value !== null) {
        for (const [key, v] of Object.entries(value)) {
          if (key === 'namespace' && typeof v === 'string') namespaces.add(v);
          walk(v);
        }
      }
    };
    walk(objects);
    expect([...namespaces]).toEqual(['mesh-system']);
    const text = JSON.stringify(objects);
    expect(text).not.toContain('.osm-healthcheck.svc');
    expect(text).not.toContain('osm-healthcheck/osm-healthcheck-webhook');
  });

  it('a tag alone: repository:tag', async () => {
    const c = container(await renderChart({ image: { repository: 'registry.example/hc', tag: '1.0' } }));
    expect(c.image).toBe('registry.example/hc:1.0');
    expect(env(c, 'OSM_HEALTHCHECK_IMAGE')?.value).toBe(c.image);
  });

  it('podDisruptionBudget.enabled=false: no PodDisruptionBudget', async () => {
    const objects = await renderChart({ podDisruptionBudget: { enabled: false } });
    expect(objects.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
  });
});
