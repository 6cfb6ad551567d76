// deploy/webhook renders with the real `kubectl kustomize`: the base, the base with the cert-manager component,
// and an overlay that sets the image. Every rendered object has the fields the API requires, every file a
// kustomization lists exists (checked without kubectl too), and one `images:` entry sets both the webhook's
// image and the image it injects.

import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import pkg from '../../package.json' with { type: 'json' };
import { missingFields } from '../helpers/api-fields.js';
import { ROOT } from '../helpers/cli.js';
import { missingListedFiles } from '../helpers/kustomization-files.js';
import { kustomize, type Manifest, render, skipWithoutKubectl, tempOverlay } from '../helpers/kustomize.js';

const BASE = `${ROOT}deploy/webhook`;
const CERT_MANAGER = `${BASE}/components/cert-manager`;

const find = (objects: Manifest[], kind: string, name?: string): Manifest | undefined =>
  objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const webhookContainer = (objects: Manifest[]): Manifest =>
  find(objects, 'Deployment')?.spec.template.spec.containers.find((c: Manifest) => c.name === 'webhook');
const envValue = (container: Manifest, name: string): unknown =>
  container.env.find((e: Manifest) => e.name === name)?.value;

/** A copy of deploy/webhook in a temp dir, to break. */
function copyOfBase(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-webhook-'));
  cpSync(BASE, dir, { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('deploy/webhook: every path a kustomization lists exists (read without kubectl)', () => {
  it('in the base and the cert-manager component', () => {
    expect(missingListedFiles(BASE)).toEqual([]);
    expect(missingListedFiles(CERT_MANAGER)).toEqual([]);
  });

  it.each([
    { name: 'a resource', remove: 'service.yaml', missing: 'kustomization.yaml: resources[3] service.yaml' },
    {
      name: 'the transformer configuration',
      remove: 'kustomizeconfig.yaml',
      missing: 'kustomization.yaml: configurations[0] kustomizeconfig.yaml',
    },
    {
      name: "a component's patch",
      remove: 'components/cert-manager/mutating-webhook.yaml',
      missing: 'components/cert-manager/kustomization.yaml: patches[1].path mutating-webhook.yaml',
    },
  ])('a missing file is named: $name', ({ remove, missing }) => {
    const copy = copyOfBase();
    try {
      rmSync(join(copy.dir, remove));
      const found = [
        ...missingListedFiles(copy.dir),
        ...missingListedFiles(join(copy.dir, 'components/cert-manager'), copy.dir),
      ];
      expect(found).toEqual([missing]);
    } finally {
      copy.remove();
    }
  });
});

describe.skipIf(skipWithoutKubectl('deploy/webhook render tests'))(
  'deploy/webhook rendered by kubectl kustomize',
  () => {
    let base: Manifest[];
    let certManager: Manifest[];
    const overlays: Array<{ remove(): void }> = [];

    beforeAll(async () => {
      base = await render(BASE);
      const overlay = tempOverlay({ resources: [BASE], components: [CERT_MANAGER] });
      overlays.push(overlay);
      certManager = await render(overlay.dir);
    });
    afterAll(() => {
      for (const overlay of overlays) overlay.remove();
    });

    it('base: every object has the fields the API requires', () => {
      expect(base.map((o) => `${o.kind}/${o.metadata.name}`)).toContain(
        'MutatingWebhookConfiguration/osm-healthcheck',
      );
      expect(base.flatMap(missingFields)).toEqual([]);
    });

    it('base + cert-manager component: every object has the fields the API requires', () => {
      expect(certManager.flatMap(missingFields)).toEqual([]);
    });

    it(`base: the webhook runs osm-healthcheck:${pkg.version} and injects the same image`, () => {
      const container = webhookContainer(base);
      expect(container.image).toBe(`osm-healthcheck:${pkg.version}`);
      expect(envValue(container, 'OSM_HEALTHCHECK_IMAGE')).toBe(container.image);
    });

    it('base: images: rewrites no env value but the injected image (it matches any value naming the image)', () => {
      const written = parseAllDocuments(readFileSync(`${BASE}/deployment.yaml`, 'utf8'))
        .map((doc) => doc.toJS() as Manifest)
        .find((o) => o.kind === 'Deployment');
      const others = (container: Manifest) =>
        container.env.filter((e: Manifest) => e.name !== 'OSM_HEALTHCHECK_IMAGE');
      expect(others(webhookContainer(base))).toEqual(others(written?.spec.template.spec.containers[0]));
    });

    it.each([
      {
        name: 'a registry and tag',
        entry: { newName: 'registry.example/you/osm-healthcheck', newTag: '9.9.9' },
        image: 'registry.example/you/osm-healthcheck:9.9.9',
      },
      {
        name: 'a digest',
        entry: { newName: 'registry.example/hc', digest: `sha256:${'a'.repeat(64)}` },
        image: `registry.example/hc@sha256:${'a'.repeat(64)}`,
      },
    ])(
      "an overlay's images: ($name) sets the webhook's image and the image it injects",
      async ({ entry, image }) => {
        const overlay = tempOverlay(
          { resources: [BASE] },
          { images: [{ name: 'osm-healthcheck', ...entry }] },
        );
        overlays.push(overlay);
        const container = webhookContainer(await render(overlay.dir));
        expect(container.image).toBe(image);
        expect(envValue(container, 'OSM_HEALTHCHECK_IMAGE')).toBe(image);
      },
    );

    it('cert-manager: the serving certificate names the Service and its CA goes into the caBundle', () => {
      const service = find(certManager, 'Service') as Manifest;
      const namespace = service.metadata.namespace as string;
      const serving = find(certManager, 'Certificate', 'osm-healthcheck-webhook') as Manifest;
      const svc = `${service.metadata.name}.${namespace}.svc`;
      expect(serving.spec.dnsNames).toEqual([svc, `${svc}.cluster.local`]);
      expect(find(certManager, 'MutatingWebhookConfiguration')?.metadata.annotations).toEqual({
        'cert-manager.io/inject-ca-from': `${namespace}/${serving.metadata.name}`,
      });
      // serving <- CA issuer <- CA certificate <- self-signed issuer
      const caIssuer = find(certManager, 'Issuer', serving.spec.issuerRef.name) as Manifest;
      const ca = certManager.find(
        (o) => o.kind === 'Certificate' && o.spec.secretName === caIssuer.spec.ca.secretName,
      );
      expect(ca?.spec.isCA).toBe(true);
      expect(find(certManager, 'Issuer', ca?.spec.issuerRef.name)?.spec.selfSigned).toEqual({});
      expect(serving.spec.privateKey.rotationPolicy).toBe('Always');
      // Not the Secret the webhook keeps by itself: switching between the two never meets a Secret of the other.
      expect(serving.spec.secretName).not.toBe('osm-healthcheck-webhook-tls');
    });

    it('cert-manager: the webhook serves the files of that Secret, with no RBAC but the watches and its own configuration (to publish the chain it serves), and no self-managed flags', () => {
      const pod = find(certManager, 'Deployment')?.spec.template.spec;
      const container = webhookContainer(certManager);
      const mount = container.volumeMounts.find((m: Manifest) => m.name === 'tls');
      expect(envValue(container, 'OSM_HEALTHCHECK_TLS_CERT')).toBe(`${mount.mountPath}/tls.crt`);
      expect(envValue(container, 'OSM_HEALTHCHECK_TLS_KEY')).toBe(`${mount.mountPath}/tls.key`);
      const volume = pod.volumes.find((v: Manifest) => v.name === 'tls');
      expect(volume.secret.secretName).toBe(
        find(certManager, 'Certificate', 'osm-healthcheck-webhook')?.spec.secretName,
      );
      // The component replaces the args (a list of strings does not merge): all of the base's but the flags of
      // self-managed TLS, so a flag added to the base and not to the component fails here.
      const selfManaged = ['--service', '--tls-secret', '--webhook-config'];
      const baseArgs = webhookContainer(base).args as string[];
      expect(container.args).toEqual(
        baseArgs.filter(
          (arg, i) => !selfManaged.includes(arg) && !selfManaged.includes(baseArgs[i - 1] ?? ''),
        ),
      );
      // Pod Security levels, namespace rules and kubelet versions still come from watches; nothing of the Secret.
      // Its own configuration, by name, to publish the certificate chain it serves (analyze reads no Secret).
      expect(certManager.filter((o) => /Role/.test(o.kind)).map((o) => o.kind)).toEqual([
        'ClusterRole',
        'ClusterRoleBinding',
      ]);
      expect(find(certManager, 'ClusterRole')?.rules).toEqual([
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
      expect(envValue(container, 'OSM_HEALTHCHECK_IMAGE')).toBe(`osm-healthcheck:${pkg.version}`);
    });

    it('kubectl refuses a tree that lacks a file its kustomization lists', async () => {
      const copy = copyOfBase();
      try {
        rmSync(join(copy.dir, 'rbac.yaml'));
        const rendered = await kustomize(copy.dir);
        expect(rendered.ok).toBe(false);
        expect(rendered.ok ? '' : rendered.error).toContain('rbac.yaml');
      } finally {
        copy.remove();
      }
    });
  },
);
