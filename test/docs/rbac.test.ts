// docs/webhook.md's RBAC table is the webhook's RBAC as deploy/webhook/rbac.yaml grants it, row for row: each rule's
// role, resources, verbs and resource names, and whether the cert-manager component keeps it. A rule added to the
// file (or to the docs) alone fails here.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/cli.js';

interface Rule {
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface Row {
  role: 'Role' | 'ClusterRole';
  resource: string;
  verbs: string;
  names: string;
  certManager: 'kept' | 'removed';
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
/** One key per resource of a rule, so a rule over several resources matches rows of one each. */
const keys = (rule: Rule) =>
  rule.resources.map((resource) =>
    JSON.stringify([resource, [...rule.verbs].sort(), [...(rule.resourceNames ?? [])].sort()]),
  );

/** The rows rbac.yaml's rules make: one per role, rule and resource. */
function granted(): Omit<Row, 'certManager'>[] {
  const objects = parseAllDocuments(read('deploy/webhook/rbac.yaml')).map((doc) => doc.toJSON());
  return objects
    .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
    .flatMap((o) =>
      (o.rules as Rule[]).flatMap((rule) =>
        rule.resources.map((resource) => ({
          role: o.kind,
          resource,
          verbs: [...rule.verbs].sort().join(','),
          names: rule.resourceNames === undefined ? 'any' : [...rule.resourceNames].sort().join(','),
        })),
      ),
    );
}

/** The ClusterRole rules the cert-manager component keeps (its patch replaces the list), and whether it deletes the Role. */
function certManager(): { clusterRules: Set<string>; deletesRole: boolean } {
  const kustomization = parse(read('deploy/webhook/components/cert-manager/kustomization.yaml'));
  const patches = (kustomization.patches as { patch?: string }[]).flatMap((p) =>
    p.patch === undefined ? [] : [parse(p.patch)],
  );
  const clusterRole = patches.find((p) => p.kind === 'ClusterRole' && p.$patch === undefined);
  return {
    clusterRules: new Set(((clusterRole?.rules ?? []) as Rule[]).flatMap(keys)),
    deletesRole: patches.some((p) => p.kind === 'Role' && p.$patch === 'delete'),
  };
}

/** docs/webhook.md's table under "## RBAC". */
function documented(): Row[] {
  const page = read('docs/webhook.md');
  const section = page.slice(page.indexOf('\n## RBAC\n'));
  return section
    .split('\n')
    .filter((line) => /^\| (Role|ClusterRole)\b/.test(line))
    .map((line) => {
      const [role = '', resource = '', verbs = '', names = '', , certManagerCell = ''] = line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      const nameList = backticked(names);
      return {
        role: role.startsWith('ClusterRole') ? 'ClusterRole' : 'Role',
        resource: backticked(resource).join(','),
        verbs: backticked(verbs).sort().join(','),
        names: nameList.length === 0 ? 'any' : nameList.sort().join(','),
        certManager: certManagerCell === 'kept' ? 'kept' : 'removed',
      };
    });
}

describe("docs/webhook.md's RBAC table", () => {
  it('has one row per rule and resource of deploy/webhook/rbac.yaml, and no other', () => {
    const rows = documented().map(({ certManager: _, ...row }) => row);
    expect(rows.length).toBeGreaterThan(0);
    const order = (a: object, b: object) => JSON.stringify(a).localeCompare(JSON.stringify(b));
    expect([...rows].sort(order)).toEqual([...granted()].sort(order));
  });

  it('says which rules the cert-manager component keeps', () => {
    const { clusterRules, deletesRole } = certManager();
    for (const row of documented()) {
      const kept =
        row.role === 'Role'
          ? !deletesRole
          : keys({
              resources: [row.resource],
              verbs: row.verbs.split(','),
              ...(row.names === 'any' ? {} : { resourceNames: row.names.split(',') }),
            }).every((k) => clusterRules.has(k));
      expect(row.certManager, `${row.role} ${row.resource}`).toBe(kept ? 'kept' : 'removed');
    }
  });
});
