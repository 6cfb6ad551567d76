// Nothing but the webhook reads a Secret (issue 43): no Role or ClusterRole in deploy/ (every file, and the rules
// of every kustomize patch) or in the chart as helm renders it (defaults, cert-manager, every value) grants any
// verb on secrets, except the webhook's own Role: get and update of its one Secret by resourceName, and create
// (which cannot be limited by name, and reads nothing).

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/cli.js';
import { renderChart, skipWithoutHelm } from '../helpers/helm.js';
import type { Manifest } from '../helpers/kustomize.js';

const WEBHOOK_ROLE = 'osm-healthcheck-webhook';
const WEBHOOK_SECRET = 'osm-healthcheck-webhook-tls';

/** Every YAML file under deploy/, and the objects of its kustomize patches written inline. */
function deployObjects(): Manifest[] {
  const files = readdirSync(join(ROOT, 'deploy'), { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.yaml'),
  );
  return files.flatMap((file) => {
    const objects = parseAllDocuments(readFileSync(join(ROOT, 'deploy', file), 'utf8')).map(
      (d) => d.toJS() as Manifest,
    );
    const patches = objects.flatMap((o) =>
      ((o?.patches ?? []) as { patch?: string }[]).flatMap((p) =>
        p.patch === undefined ? [] : [parse(p.patch)],
      ),
    );
    return [...objects, ...patches].filter((o) => o !== null && typeof o === 'object');
  });
}

/** Each grant touching secrets (`*` included), as `Kind/name: verb [names]`. */
function secretGrants(objects: Manifest[]): string[] {
  return objects
    .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
    .flatMap((role) =>
      ((role.rules ?? []) as Manifest[])
        .filter(
          (rule) =>
            (rule.apiGroups ?? []).some((g: string) => g === '' || g === '*') &&
            (rule.resources ?? []).some((r: string) => r === 'secrets' || r === '*'),
        )
        .flatMap((rule) =>
          (rule.verbs as string[]).map(
            (verb) =>
              `${role.kind}/${role.metadata.name}: ${verb} [${(rule.resourceNames ?? ['*']).join(',')}]`,
          ),
        ),
    );
}

const ALLOWED = [
  `Role/${WEBHOOK_ROLE}: create [*]`,
  `Role/${WEBHOOK_ROLE}: get [${WEBHOOK_SECRET}]`,
  `Role/${WEBHOOK_ROLE}: update [${WEBHOOK_SECRET}]`,
];

describe('no role reads a Secret but the webhook its own', () => {
  it('deploy/: only the webhook Role, on its one Secret', () => {
    const objects = deployObjects();
    expect(objects.some((o) => o.kind === 'Role')).toBe(true);
    expect([...new Set(secretGrants(objects))].sort()).toEqual(ALLOWED);
  });

  it('the checker sees a grant it must refuse', () => {
    const role = {
      kind: 'ClusterRole',
      metadata: { name: 'r' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['get'] }],
    };
    expect(secretGrants([role])).toEqual(['ClusterRole/r: get [*]']);
  });

  it.skipIf(skipWithoutHelm('chart secret rules')).each([
    { name: 'the defaults', values: {}, expected: ALLOWED },
    { name: 'cert-manager', values: { tls: { certManager: { enabled: true } } }, expected: [] },
  ])('the chart rendered with $name', async ({ values, expected }) => {
    expect(secretGrants(await renderChart(values)).sort()).toEqual(expected);
  });
});
