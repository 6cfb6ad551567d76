// deploy/webhook as written: its names, selectors, ports and paths line up with each other and with what the
// webhook serves, and it needs nothing but the built-in API (no CRD). test/deploy/kustomize.test.ts renders it.

import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { MUTATE_PATH } from '../../src/webhook/app.js';
import type { Manifest } from '../helpers/kustomize.js';
import { CONTRACT, DIR, flag, kustomization, matches, objects, one } from './deploy-manifests.js';

const namespace = one('Namespace').metadata.name as string;
const deployment = one('Deployment');
const pod = deployment.spec.template;
const container = pod.spec.containers[0];
const args = container.args as string[];
const env = (name: string) => container.env.find((e: Manifest) => e.name === name);
const service = one('Service');
const webhookConfig = one('MutatingWebhookConfiguration');
const webhook = webhookConfig.webhooks[0];

/** The API groups every cluster serves: the base must need no CRD (cert-manager is an opt-in component). */
const BUILT_IN = [
  'v1',
  'apps/v1',
  'policy/v1',
  'rbac.authorization.k8s.io/v1',
  'admissionregistration.k8s.io/v1',
];

describe('deploy/webhook', () => {
  it('kustomization lists every manifest beside it; every namespaced object is in the webhook namespace', () => {
    const yaml = readdirSync(DIR).filter((file) => file.endsWith('.yaml'));
    expect(
      [...kustomization.resources, ...kustomization.configurations, 'kustomization.yaml'].sort(),
    ).toEqual(yaml.sort());
    for (const o of objects) {
      if (
        ['Namespace', 'MutatingWebhookConfiguration', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind)
      ) {
        expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBeUndefined();
      } else expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(namespace);
    }
  });

  it('needs no CRD: only built-in kinds', () => {
    for (const o of objects) expect(BUILT_IN, `${o.kind}/${o.metadata.name}`).toContain(o.apiVersion);
  });

  it('the image is set once, by images: in the kustomization, for the webhook and what it injects', () => {
    expect(kustomization.images).toEqual([{ name: 'osm-healthcheck', newTag: pkg.version }]);
    expect(container.image).toBe('osm-healthcheck');
    expect(env('OSM_HEALTHCHECK_IMAGE')).toEqual({ name: 'OSM_HEALTHCHECK_IMAGE', value: 'osm-healthcheck' });
    expect(args).not.toContain('--image');
  });

  it('Deployment: two replicas, self-managed TLS under the names RBAC grants, probes on HTTPS', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(matches(deployment.spec.selector, pod.metadata.labels)).toBe(true);
    expect(args[0]).toBe('webhook');
    expect(args).not.toContain('--tls-cert');
    expect(args).not.toContain('--tls-key');
    expect(flag(args, '--service')).toBe(service.metadata.name);
    expect(flag(args, '--tls-secret')).toBe(CONTRACT.tlsSecret);
    expect(flag(args, '--webhook-config')).toBe(webhookConfig.metadata.name);
    expect(env('OSM_HEALTHCHECK_NAMESPACE').valueFrom).toEqual({
      fieldRef: { fieldPath: 'metadata.namespace' },
    });
    const port = container.ports.find((p: Manifest) => p.name === 'https');
    expect(String(port.containerPort)).toBe(flag(args, '--port'));
    // The Service's port `metrics` (the ServiceMonitor's) reaches the plain-HTTP /metrics.
    const metrics = container.ports.find((p: Manifest) => p.name === 'metrics');
    expect(String(metrics.containerPort)).toBe(flag(args, '--metrics-port'));
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'https', scheme: 'HTTPS' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'https', scheme: 'HTTPS' });
    // It reads its Secret and writes its caBundle with the service account's token.
    expect(pod.spec.automountServiceAccountToken).toBe(true);
    expect(pod.spec.serviceAccountName).toBe(CONTRACT.serviceAccount);
    expect(one('ServiceAccount', pod.spec.serviceAccountName).metadata.namespace).toBe(namespace);
  });

  it('a pod going away serves on while its endpoint leaves the Service, drains within the grace period; Pod Security restricted', () => {
    const sleep = container.lifecycle.preStop.exec.command as string[];
    expect(sleep[0]).toBe('sleep');
    const seconds = Number(sleep[1]);
    expect(seconds).toBeGreaterThanOrEqual(5);
    // preStop, then the admissions in flight (each at most the webhook's timeoutSeconds), within the grace.
    expect(seconds + webhook.timeoutSeconds).toBeLessThan(pod.spec.terminationGracePeriodSeconds);
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(one('Namespace').metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('PodDisruptionBudget keeps one of the two replicas, spread over nodes', () => {
    const pdb = one('PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    expect(matches(pdb.spec.selector, pod.metadata.labels)).toBe(true);
    const [spread] = pod.spec.topologySpreadConstraints;
    expect(spread.topologyKey).toBe('kubernetes.io/hostname');
    expect(matches(spread.labelSelector, pod.metadata.labels)).toBe(true);
  });

  it("Service selects the webhook's pods and reaches their https port", () => {
    expect(service.metadata.name).toBe(CONTRACT.service);
    expect(matches({ matchLabels: service.spec.selector }, pod.metadata.labels)).toBe(true);
    expect(service.spec.ports).toEqual([
      { name: 'https', port: 443, targetPort: 'https' },
      { name: 'metrics', port: 8080, targetPort: 'metrics' },
    ]);
  });

  it('MutatingWebhookConfiguration: pods CREATE in labelled namespaces, never blocking, reinvoked if needed', () => {
    expect(webhookConfig.metadata.name).toBe(CONTRACT.webhookConfig);
    expect(webhookConfig.webhooks.map((w: Manifest) => w.name)).toEqual([
      'inject.osm-healthcheck.io',
      'warn.osm-healthcheck.io',
    ]);
    expect(webhook.clientConfig.service).toEqual({
      name: service.metadata.name,
      namespace,
      path: MUTATE_PATH,
      port: service.spec.ports[0].port,
    });
    // Left out, not empty: a re-apply then keeps the caBundle the webhook wrote (see the file's comment).
    expect(Object.hasOwn(webhook.clientConfig, 'caBundle')).toBe(false);
    expect(webhookConfig.metadata.annotations).toBeUndefined();
    expect(webhook.rules).toEqual([
      {
        operations: ['CREATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    ]);
    expect(webhook.namespaceSelector).toEqual({ matchLabels: { 'osm-healthcheck-injection': 'enabled' } });
    expect(matches(webhook.objectSelector, pod.metadata.labels)).toBe(false);
    expect(matches(webhook.objectSelector, { app: 'web' })).toBe(true);
    expect(webhook).toMatchObject({
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      timeoutSeconds: 5,
      reinvocationPolicy: 'IfNeeded',
      admissionReviewVersions: ['v1'],
    });
  });

  it('MutatingWebhookConfiguration: the workloads people apply, for warnings only, like the pods', () => {
    const warn = webhookConfig.webhooks[1];
    const { rules: _pods, reinvocationPolicy: _again, name: _name, ...podsRest } = webhook;
    const { rules, reinvocationPolicy, name: _warnName, ...warnRest } = warn;
    // Same service, path, selectors and failure policy as the pods' entry: only what it matches differs.
    expect(warnRest).toEqual(podsRest);
    expect(reinvocationPolicy).toBe('Never');
    expect(rules).toEqual([
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: ['deployments', 'statefulsets', 'daemonsets'],
        scope: 'Namespaced',
      },
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: ['batch'],
        apiVersions: ['v1'],
        resources: ['jobs', 'cronjobs'],
        scope: 'Namespaced',
      },
    ]);
  });
});
