// The chart's values: each one is documented in its README, set by test/fixtures/chart/every-value.yaml (so the
// render tests cover it), and a bad one fails `helm template` (as it fails install and upgrade) with helm's
// message naming it, from values.schema.json or, for what a schema cannot say, the template itself.

import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART, skipWithoutHelm, template } from '../helpers/helm.js';
import type { Manifest } from '../helpers/kustomize.js';

const defaults = parse(readFileSync(`${CHART}/values.yaml`, 'utf8')) as Manifest;
const everyValue = parse(
  readFileSync(new URL('../fixtures/chart/every-value.yaml', import.meta.url), 'utf8'),
) as Manifest;
const readme = readFileSync(`${CHART}/README.md`, 'utf8');
/** The values the README's table documents: its first column. */
const documented = [...readme.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] as string);

const at = (values: Manifest, path: string): unknown =>
  path.split('.').reduce<unknown>((v, key) => (v as Manifest | undefined)?.[key], values);
const isMap = (v: unknown): v is Manifest => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Paths of values.yaml the README does not document: a map is documented as a whole or key by key. */
function undocumented(values: Manifest, prefix = ''): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const path = `${prefix}${key}`;
    if (documented.includes(path)) return [];
    if (isMap(value) && Object.keys(value).length > 0) return undocumented(value, `${path}.`);
    return [path];
  });
}

describe('charts/osm-healthcheck values', () => {
  it('the README documents every value, and only values that exist', () => {
    expect(undocumented(defaults)).toEqual([]);
    expect(documented.filter((path) => at(defaults, path) === undefined)).toEqual([]);
  });

  it("the README's default column is values.yaml's, where it gives the value as code", () => {
    // `| \`replicas\` | \`2\` | ...`: a default cell that is one code span is YAML; prose cells state no value.
    const rows = [...readme.matchAll(/^\| `([^`]+)` \| `([^`]+)` \|/gm)];
    expect(rows.length).toBeGreaterThan(20);
    const wrong = rows
      .filter(([, path = '', shown = '']) => !isDeepStrictEqual(parse(shown), at(defaults, path)))
      .map(([, path, shown]) => `${path}: the README says ${shown}`);
    expect(wrong).toEqual([]);
  });

  it('every-value.yaml sets every documented value to something other than its default', () => {
    // Off, the budget's minAvailable (set there) would render nothing: chart.test.ts renders it off on its own.
    const renderedOnItsOwn = ['podDisruptionBudget.enabled'];
    const same = documented.filter((path) => isDeepStrictEqual(at(everyValue, path), at(defaults, path)));
    expect(same).toEqual(renderedOnItsOwn);
  });

  it('undocumented() finds a value the README leaves out, in a map or at the top', () => {
    expect(undocumented({ image: { repository: 'x', mirror: 'y' }, extra: {} })).toEqual([
      'image.mirror',
      'extra',
    ]);
  });
});

describe.skipIf(skipWithoutHelm('chart schema tests'))('a bad value fails helm template, naming it', () => {
  it.each([
    {
      name: 'a string for an integer',
      values: { replicas: 'two' },
      error: '- replicas: Invalid type. Expected: integer, given: string',
    },
    { name: 'no replica', values: { replicas: 0 }, error: '- replicas: Must be greater than or equal to 1' },
    {
      name: 'a misspelt key',
      values: { replica: 2 },
      error: '- (root): Additional property replica is not allowed',
    },
    {
      name: 'a misspelt nested key',
      values: { resources: { request: { cpu: '1' } } },
      error: '- resources: Additional property request is not allowed',
    },
    {
      name: 'a short digest',
      values: { image: { digest: 'sha256:abc' } },
      error: '- image.digest: Does not match pattern',
    },
    {
      name: 'a tag in the repository',
      values: { image: { repository: 'hc:1.0' } },
      error: '- image.repository: Does not match pattern',
    },
    {
      name: 'a tag with a space',
      values: { image: { tag: '1.0 beta' } },
      error: '- image.tag: Does not match pattern',
    },
    {
      name: 'an unknown pull policy',
      values: { image: { pullPolicy: 'Sometimes' } },
      error:
        '- image.pullPolicy: image.pullPolicy must be one of the following: "", "Always", "IfNotPresent", "Never"',
    },
    {
      name: 'an unknown node agent backend',
      values: { node: { enabled: true, podCIDR: '10.244.0.0/16', backend: 'iptables' } },
      error: '- node.backend: node.backend must be one of the following: "auto", "nft", "legacy", "nftables"',
    },
    {
      name: 'an unknown failure policy',
      values: { webhook: { failurePolicy: 'Never' } },
      error: '- webhook.failurePolicy: webhook.failurePolicy must be one of the following: "Ignore", "Fail"',
    },
    {
      name: 'a timeout over 30 s',
      values: { webhook: { timeoutSeconds: 31 } },
      error: '- webhook.timeoutSeconds: Must be less than or equal to 30',
    },
    {
      name: 'a selector expression without operator',
      values: { webhook: { objectSelector: { matchExpressions: [{ key: 'a' }] } } },
      error: '- webhook.objectSelector.matchExpressions.0: operator is required',
    },
    {
      name: 'an unknown selector operator',
      values: { webhook: { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Is' }] } } },
      error:
        '- webhook.namespaceSelector.matchExpressions.0.operator: webhook.namespaceSelector.matchExpressions.0.operator must be one of the following: "In", "NotIn", "Exists", "DoesNotExist"',
    },
    {
      name: 'a string for a boolean',
      values: { nativeSidecar: { enabled: 'yes' } },
      error: '- nativeSidecar.enabled: Invalid type. Expected: boolean, given: string',
    },
    {
      name: 'a placement that is none',
      values: { placement: 'last' },
      error: '- placement: placement must be one of the following: "auto", "native-sidecar", "first"',
    },
    {
      name: 'the older nativeSidecar.enabled against placement first (the template says so)',
      values: { placement: 'first', nativeSidecar: { enabled: true } },
      error: 'nativeSidecar.enabled is the older name of placement: native-sidecar, and placement is first',
    },
    {
      name: 'an issuer without name',
      values: { tls: { certManager: { enabled: true, issuerRef: { kind: 'ClusterIssuer' } } } },
      error: '- tls.certManager.issuerRef: Has a dependency on name',
    },
    {
      name: 'a percentage over 100',
      values: { podDisruptionBudget: { minAvailable: '150%' } },
      error: '- podDisruptionBudget.minAvailable: Must validate one and only one schema (oneOf)',
    },
    {
      name: 'a label value that is a number',
      values: { podLabels: { tier: 1 } },
      error: '- podLabels.tier: Invalid type. Expected: string, given: integer',
    },
    {
      name: "the chart's own label",
      values: { commonLabels: { 'app.kubernetes.io/name': 'x' } },
      error: '- commonLabels: Property name of "app.kubernetes.io/name" does not match',
    },
    {
      name: 'an invalid label key',
      values: { commonLabels: { 'team name': 'x' } },
      error: '- commonLabels: Property name of "team name" does not match',
    },
    {
      name: 'tolerations not a list',
      values: { tolerations: { key: 'a' } },
      error: '- tolerations: Invalid type. Expected: array, given: object',
    },
    {
      name: 'a CPU limit that is no quantity',
      values: { companion: { cpuLimit: 'one core' } },
      error: '- companion.cpuLimit: Does not match pattern',
    },
    {
      name: 'a CPU limit of zero',
      values: { companion: { cpuLimit: 0 } },
      error: '- companion.cpuLimit: Must be greater than 0',
    },
    {
      name: 'a scrape interval that is no duration',
      values: { monitoring: { serviceMonitor: { interval: 'often' } } },
      error: '- monitoring.serviceMonitor.interval: Does not match pattern',
    },
    {
      name: 'a misspelt monitoring key',
      values: { monitoring: { dashboards: { enabled: true } } },
      error: '- monitoring: Additional property dashboards is not allowed',
    },
    {
      name: 'a budget no drain can meet (the template says so)',
      values: { replicas: 2, podDisruptionBudget: { minAvailable: 2 } },
      error: 'podDisruptionBudget.minAvailable (2) must be less than replicas (2)',
    },
  ])('$name', async ({ values, error }) => {
    const rendered = await template(values);
    expect(rendered.ok).toBe(false);
    expect(rendered.ok ? '' : rendered.error).toContain(error);
  });

  it('the values schema accepts what the chart documents as valid', async () => {
    for (const values of [
      { podDisruptionBudget: { minAvailable: '50%' } },
      { image: { repository: 'Registry.Example:5000/a__b/c--d', pullPolicy: 'Never' } },
      { replicas: 1, podDisruptionBudget: { enabled: false } },
      { companion: { cpuLimit: '0.5' } },
      { companion: { cpuLimit: 2 } },
      {
        webhook: {
          namespaceSelector: { matchLabels: null, matchExpressions: [{ key: 'm', operator: 'Exists' }] },
        },
      },
    ]) {
      const rendered = await template(values);
      expect(rendered.ok ? '' : rendered.error, JSON.stringify(values)).toBe('');
    }
  });
});
