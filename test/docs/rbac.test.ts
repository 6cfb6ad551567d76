// docs/webhook.md's RBAC table is the webhook's RBAC as deploy/webhook/rbac.yaml grants it, row for row: each rule's
// role, resources, verbs and resource names, and whether the cert-manager component keeps it. A rule added to the
// file (or to the docs) alone fails here. And rbac.yaml's own comments say what its rules grant: the resources it
// lists and watches, the names the Deployment passes as args, each rule's resources.

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

/** rbac.yaml's own text: its header comment, and each rule with the comment right above it. */
function commented(): { header: string; rules: { comment: string; resources: string[] }[] } {
  const lines = read('deploy/webhook/rbac.yaml').split('\n');
  const header = lines
    .slice(
      0,
      lines.findIndex((line) => !line.startsWith('#')),
    )
    .map((line) => line.replace(/^#\s?/, ''))
    .join(' ');
  const rules = lines.flatMap((line, index) => {
    if (!/^\s+- apiGroups:/.test(line)) return [];
    const comment: string[] = [];
    for (let above = index - 1; above >= 0 && /^\s+#/.test(lines[above] ?? ''); above--) {
      comment.unshift((lines[above] ?? '').replace(/^\s+#\s?/, ''));
    }
    const resources = JSON.parse(
      /resources:\s*(\[.*\])/.exec(lines[index + 1] ?? '')?.[1] ?? '[]',
    ) as string[];
    return [{ comment: comment.join(' '), resources }];
  });
  return { header, rules };
}

/** A resource as prose names it: `limitranges` in "LimitRanges", `secrets` in "Secret". */
const named = (text: string, resource: string) =>
  text.toLowerCase().replace(/\s+/g, '').includes(resource.replace(/s$/, ''));

describe("deploy/webhook/rbac.yaml's comments", () => {
  it('the header names every resource listed and watched, and no other', () => {
    const { header } = commented();
    const sentence = /lists and watches(.*?)and nothing else/.exec(header)?.[1] ?? '';
    expect(sentence).not.toBe('');
    const watched = granted()
      .filter(({ verbs }) => verbs === 'list,watch')
      .map(({ resource }) => resource);
    expect(backticked(sentence).sort()).toEqual([...new Set(watched)].sort());
  });

  it('the names it keeps its TLS under are the args the Deployment passes, as the header says', () => {
    const { header } = commented();
    expect(header).toMatch(/passes them as args/);
    const container = parseAllDocuments(read('deploy/webhook/deployment.yaml'))
      .map((doc) => doc.toJSON())
      .find((o) => o.kind === 'Deployment').spec.template.spec.containers[0] as {
      args: string[];
      env: { name: string }[];
    };
    const arg = (flag: string) => container.args[container.args.indexOf(flag) + 1];
    const byName = (resource: string) =>
      granted().find((row) => row.resource === resource && row.names !== 'any');
    for (const [flag, resource] of [
      ['--tls-secret', 'secrets'],
      ['--webhook-config', 'mutatingwebhookconfigurations'],
    ] as const) {
      expect(header, flag).toContain(flag);
      expect(arg(flag), flag).toBe(byName(resource)?.names);
    }
    // Not through the environment: no variable of the container names a Secret or a webhook configuration.
    expect(
      container.env.map(({ name }) => name).filter((name) => /SECRET|WEBHOOK_CONFIG/.test(name)),
    ).toEqual([]);
  });

  it('each rule says what it is for, naming its resources', () => {
    const { rules } = commented();
    expect(rules.length).toBe(granted().length - 1); // one rule covers limitranges and resourcequotas
    for (const { comment, resources } of rules) {
      expect(comment, resources.join(',')).not.toBe('');
      for (const resource of resources)
        expect(named(comment, resource), `${resource}: ${comment}`).toBe(true);
    }
  });
});
