// One source of truth for the webhook's objects: `helm template` of charts/osm-healthcheck and `kubectl kustomize`
// of deploy/webhook, with the same settings, render the same objects, field for field. The one difference
// allowed: deploy/webhook makes its Namespace, the chart cannot (Helm keeps the release in it, so it exists
// before the chart's objects; `helm install --create-namespace`), and its README says how to give it the same
// labels. A change to deploy/webhook (a rule, an arg) fails here until the chart has it too.

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { CHART, NAMESPACE, renderChart, skipWithoutHelm } from '../helpers/helm.js';
import { type Manifest, render, skipWithoutKubectl, tempOverlay } from '../helpers/kustomize.js';

const BASE = `${ROOT}deploy/webhook`;
const CERT_MANAGER = `${BASE}/components/cert-manager`;
const NODE = `${ROOT}deploy/node`;
const DIGEST = `sha256:${'b'.repeat(64)}`;

const id = (o: Manifest): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byId = (objects: Manifest[]): Record<string, Manifest> =>
  Object.fromEntries(objects.map((o) => [id(o), o]));
/** kustomize's objects less its Namespace, which the chart leaves to Helm. */
const withoutNamespace = (objects: Manifest[]): Manifest[] => objects.filter((o) => o.kind !== 'Namespace');

const CASES = [
  { name: 'the defaults', overlay: {}, components: [], values: {} },
  {
    name: 'cert-manager',
    overlay: {},
    components: [CERT_MANAGER],
    values: { tls: { certManager: { enabled: true } } },
  },
  {
    name: 'the node agent (deploy/node, node.enabled)',
    overlay: {},
    components: [NODE],
    values: { node: { enabled: true } },
  },
  {
    name: 'an image from a registry, by tag',
    overlay: { images: [{ name: 'osm-healthcheck', newName: 'registry.example/you/hc', newTag: '9.9.9' }] },
    components: [],
    values: { image: { repository: 'registry.example/you/hc', tag: '9.9.9' } },
  },
  {
    name: 'an image by digest, with cert-manager',
    overlay: { images: [{ name: 'osm-healthcheck', newName: 'registry.example/hc', digest: DIGEST }] },
    components: [CERT_MANAGER],
    values: {
      image: { repository: 'registry.example/hc', digest: DIGEST },
      tls: { certManager: { enabled: true } },
    },
  },
];

describe.skipIf(skipWithoutHelm('chart parity') || skipWithoutKubectl('chart parity'))(
  'charts/osm-healthcheck renders what deploy/webhook does',
  () => {
    const overlays: Array<{ remove(): void }> = [];
    afterAll(() => {
      for (const overlay of overlays) overlay.remove();
    });

    it.each(CASES)('$name', async ({ overlay, components, values }) => {
      const dir = tempOverlay({ resources: [BASE], components }, overlay);
      overlays.push(dir);
      const kustomized = await render(dir.dir);
      const charted = await renderChart(values);
      expect(charted.map(id).sort()).toEqual(withoutNamespace(kustomized).map(id).sort());
      expect(byId(charted)).toEqual(byId(withoutNamespace(kustomized)));
    });

    it("the namespace: deploy/webhook's is the one the tests install into, and the chart's README labels it alike", async () => {
      const namespace = (await render(BASE)).find((o) => o.kind === 'Namespace') as Manifest;
      expect(namespace.metadata.name).toBe(NAMESPACE);
      const readme = readFileSync(`${CHART}/README.md`, 'utf8');
      for (const [key, value] of Object.entries(namespace.metadata.labels as Record<string, string>)) {
        expect(readme, `the label ${key}`).toContain(`${key}=${value}`);
      }
    });
  },
);
