// deploy/webhook: the manifests parse, and their names, selectors, ports and paths line up with each other and
// with what the webhook serves.

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import pkg from '../../package.json' with { type: 'json' };
import { MUTATE_PATH } from '../../src/webhook/app.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed manifests, walked by the field names Kubernetes defines
type Json = Record<string, any>;

const DIR = new URL('../../deploy/webhook/', import.meta.url);
const files = readdirSync(DIR).filter((file) => file.endsWith('.yaml'));
const objects: Json[] = files
  .filter((file) => file !== 'kustomization.yaml')
  .flatMap((file) =>
    parseAllDocuments(readFileSync(new URL(file, DIR), 'utf8')).map((doc) => {
      expect(doc.errors, file).toEqual([]);
      return doc.toJS() as Json;
    }),
  );

function one(kind: string, name?: string): Json {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Json;
}

/** A Kubernetes label selector (matchLabels and matchExpressions) applied to a set of labels. */
function matches(selector: Json, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpression = (selector.matchExpressions ?? []).every((e: Json) => {
    const has = Object.hasOwn(labels, e.key);
    switch (e.operator) {
      case 'In':
        return has && e.values.includes(labels[e.key]);
      case 'NotIn':
        return !has || !e.values.includes(labels[e.key]);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        throw new Error(`unknown operator ${e.operator}`);
    }
  });
  return byLabel && byExpression;
}

const namespace = one('Namespace').metadata.name as string;
const deployment = one('Deployment');
const pod = deployment.spec.template;
const container = pod.spec.containers[0];
const args = container.args as string[];
const flag = (name: string) => args[args.indexOf(name) + 1];
const service = one('Service');
const webhookConfig = one('MutatingWebhookConfiguration');
const webhook = webhookConfig.webhooks[0];
const serving = one('Certificate', 'osm-healthcheck-webhook');

describe('deploy/webhook', () => {
  it('kustomization lists every manifest; every namespaced object is in the webhook namespace', () => {
    const kustomization = parseAllDocuments(
      readFileSync(new URL('kustomization.yaml', DIR), 'utf8'),
    )[0]?.toJS();
    expect([...kustomization.resources].sort()).toEqual(
      files.filter((f) => f !== 'kustomization.yaml').sort(),
    );
    for (const o of objects) {
      if (o.kind === 'Namespace' || o.kind === 'MutatingWebhookConfiguration') continue;
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(namespace);
    }
  });

  it('Deployment: two replicas, the webhook command with the certificate from the secret, probes on HTTPS', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(matches(deployment.spec.selector, pod.metadata.labels)).toBe(true);
    expect(args[0]).toBe('webhook');
    expect(container.image).toBe(`osm-healthcheck:${pkg.version}`);
    expect(flag('--image')).toBe(container.image);
    const port = container.ports.find((p: Json) => p.name === 'https');
    expect(String(port.containerPort)).toBe(flag('--port'));
    const mount = container.volumeMounts.find((m: Json) => m.name === 'tls');
    expect(flag('--tls-cert')).toBe(`${mount.mountPath}/tls.crt`);
    expect(flag('--tls-key')).toBe(`${mount.mountPath}/tls.key`);
    const volume = pod.spec.volumes.find((v: Json) => v.name === 'tls');
    expect(volume.secret.secretName).toBe(serving.spec.secretName);
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'https', scheme: 'HTTPS' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'https', scheme: 'HTTPS' });
    expect(one('ServiceAccount', pod.spec.serviceAccountName).metadata.namespace).toBe(namespace);
  });

  it('PodDisruptionBudget keeps one of the two replicas', () => {
    const pdb = one('PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    expect(matches(pdb.spec.selector, pod.metadata.labels)).toBe(true);
  });

  it("Service selects the webhook's pods and reaches their https port", () => {
    expect(matches({ matchLabels: service.spec.selector }, pod.metadata.labels)).toBe(true);
    expect(service.spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 'https' }]);
  });

  it('MutatingWebhookConfiguration: pods CREATE in labelled namespaces, never blocking, reinvoked if needed', () => {
    expect(webhookConfig.webhooks).toHaveLength(1);
    expect(webhook.clientConfig.service).toEqual({
      name: service.metadata.name,
      namespace,
      path: MUTATE_PATH,
      port: service.spec.ports[0].port,
    });
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

  it("cert-manager: the serving certificate names the Service and its CA goes into the webhook's caBundle", () => {
    const svc = `${service.metadata.name}.${namespace}.svc`;
    expect(serving.spec.dnsNames).toEqual([svc, `${svc}.cluster.local`]);
    expect(webhookConfig.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(
      `${namespace}/${serving.metadata.name}`,
    );
    // serving <- CA issuer <- CA certificate <- self-signed issuer
    const caIssuer = one('Issuer', serving.spec.issuerRef.name);
    const ca = objects.find(
      (o) => o.kind === 'Certificate' && o.spec.secretName === caIssuer.spec.ca.secretName,
    );
    expect(ca?.spec.isCA).toBe(true);
    expect(one('Issuer', ca?.spec.issuerRef.name).spec.selfSigned).toEqual({});
    expect(serving.spec.privateKey.rotationPolicy).toBe('Always');
  });
});
