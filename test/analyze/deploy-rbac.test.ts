// deploy/analyze: analyze's read-only RBAC, rule for rule, with the names deploy/webhook deploys under; each rule's
// comment says what it is for and the header names every resource it lists; the opt-in dry-run component grants
// one right; no Secret anywhere; the CronJob runs `analyze -A` as its ServiceAccount under restricted Pod Security; and all of it
// renders with the real `kubectl kustomize`. test/analyze/rbac-envtest.test.ts shows the rules on an API server.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { missingFields } from '../helpers/api-fields.js';
import { ROOT } from '../helpers/cli.js';
import { missingListedFiles } from '../helpers/kustomization-files.js';
import { type Manifest, render, skipWithoutKubectl, tempOverlay } from '../helpers/kustomize.js';
import { grants, ruleComments } from '../helpers/rbac-grants.js';

const BASE = join(ROOT, 'deploy/analyze');
const DRY_RUN = join(BASE, 'components/dry-run');
const read = (path: string): Manifest[] =>
  parseAllDocuments(readFileSync(join(ROOT, path), 'utf8')).map((d) => d.toJS() as Manifest);
const one = (objects: Manifest[], kind: string, name?: string): Manifest => {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found.map((o) => `${o.kind}/${o.metadata.name}`)).toHaveLength(1);
  return found[0] as Manifest;
};

const webhook = [
  ...read('deploy/webhook/rbac.yaml'),
  ...read('deploy/webhook/deployment.yaml'),
  ...read('deploy/webhook/mutating-webhook.yaml'),
];
const WEBHOOK_CONFIG = one(webhook, 'MutatingWebhookConfiguration').metadata.name as string;
const WEBHOOK_DEPLOYMENT = one(webhook, 'Deployment');
const NAMESPACE = WEBHOOK_DEPLOYMENT.metadata.namespace as string;

const rbac = read('deploy/analyze/rbac.yaml');
const account = one(rbac, 'ServiceAccount');
const subject = { kind: 'ServiceAccount', name: account.metadata.name, namespace: NAMESPACE };

describe('deploy/analyze RBAC', () => {
  it('a ServiceAccount, a ClusterRole and a Role in the webhook namespace, and their bindings; nothing else', () => {
    expect(rbac.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/osm-healthcheck-analyze',
      'ClusterRoleBinding/osm-healthcheck-analyze',
      'Role/osm-healthcheck-analyze',
      'RoleBinding/osm-healthcheck-analyze',
      'ServiceAccount/osm-healthcheck-analyze',
    ]);
    expect(account.metadata.namespace).toBe(NAMESPACE);
  });

  it('ClusterRole: list what the data plane is judged from, get namespaces (-n) and the webhook configuration by name; no watch, no write', () => {
    expect(grants(one(rbac, 'ClusterRole'))).toEqual([
      '/limitranges[*] list',
      '/namespaces[*] get',
      '/namespaces[*] list',
      '/nodes[*] list',
      '/pods[*] list',
      '/resourcequotas[*] list',
      `admissionregistration.k8s.io/mutatingwebhookconfigurations[${WEBHOOK_CONFIG}] get`,
      'apps/replicasets[*] list',
      'batch/jobs[*] list',
    ]);
  });

  it("Role, in the webhook's namespace: get its Deployment by name, list EndpointSlices", () => {
    const role = one(rbac, 'Role');
    expect(role.metadata.namespace).toBe(NAMESPACE);
    expect(grants(role)).toEqual([
      `apps/deployments[${WEBHOOK_DEPLOYMENT.metadata.name}] get`,
      'discovery.k8s.io/endpointslices[*] list',
    ]);
  });

  it.each([
    ['ClusterRoleBinding', 'ClusterRole'],
    ['RoleBinding', 'Role'],
  ])('%s binds the %s to the ServiceAccount', (binding, role) => {
    const bound = one(rbac, binding);
    expect(bound.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: role,
      name: one(rbac, role).metadata.name,
    });
    expect(bound.subjects).toEqual([subject]);
  });

  it('components/dry-run: create pods only, bound in one namespace (a RoleBinding), the one the CronJob names', () => {
    const objects = read('deploy/analyze/components/dry-run/rbac.yaml');
    expect(grants(one(objects, 'ClusterRole'))).toEqual(['/pods[*] create']);
    expect(objects.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'RoleBinding']);
    const binding = one(objects, 'RoleBinding');
    expect(binding.subjects).toEqual([subject]);
    const patch = readFileSync(join(DRY_RUN, 'kustomization.yaml'), 'utf8');
    expect(patch).toContain(`"--dry-run-namespace", "${binding.metadata.namespace}"`);
  });
});

describe("deploy/analyze's RBAC comments", () => {
  it('the header names every resource the read-only roles list, and no other', () => {
    const text = readFileSync(join(BASE, 'rbac.yaml'), 'utf8');
    const header = text.slice(0, text.indexOf('\napiVersion')).replaceAll(/\n#\s?/g, ' ');
    const listed = [one(rbac, 'ClusterRole'), one(rbac, 'Role')]
      .flatMap(grants)
      .filter((g) => g.endsWith(' list'))
      .map((g) => /\/(\w+)\[/.exec(g)?.[1]);
    const named = [...header.matchAll(/`([a-z]+)`/g)].map((m) => m[1]);
    expect(named.sort()).toEqual([...new Set(listed)].sort());
  });

  it.each(['deploy/analyze/rbac.yaml', 'deploy/analyze/components/dry-run/rbac.yaml'])(
    'each rule of %s says what it is for, naming its resources',
    (file) => {
      const rules = ruleComments(readFileSync(join(ROOT, file), 'utf8'));
      expect(rules.length).toBeGreaterThan(0);
      for (const { comment, resources } of rules) {
        expect(comment, resources.join(',')).not.toBe('');
        const words = comment.toLowerCase().replaceAll(/[^a-z]/g, '');
        for (const resource of resources) {
          expect(words.includes(resource.replace(/s$/, '')), `${resource}: ${comment}`).toBe(true);
        }
      }
    },
  );
});

describe('deploy/analyze CronJob', () => {
  const cronJob = one(read('deploy/analyze/cronjob.yaml'), 'CronJob');
  const job = cronJob.spec.jobTemplate.spec;
  const pod = job.template.spec;
  const container = pod.containers[0];

  it('runs `analyze -A` as the ServiceAccount, once at a time, and a failing exit fails the Job (no retries)', () => {
    expect(cronJob.metadata.namespace).toBe(NAMESPACE);
    expect(container.args).toEqual(['analyze', '-A']);
    expect(pod.serviceAccountName).toBe(account.metadata.name);
    expect(pod.restartPolicy).toBe('Never');
    expect(job.backoffLimit).toBe(0);
    expect(cronJob.spec.concurrencyPolicy).toBe('Forbid');
  });

  it('as restricted Pod Security asks: non-root, RuntimeDefault seccomp, no escalation, every capability dropped', () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toEqual({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    // The webhook's objectSelector would otherwise not matter: its namespace is not labelled for injection.
    expect(pod.hostNetwork).toBeUndefined();
  });
});

describe('deploy/analyze renders with kubectl kustomize', () => {
  const skip = skipWithoutKubectl('deploy/analyze kustomize');
  const overlay = tempOverlay({ resources: [BASE], components: [DRY_RUN] });
  let base: Manifest[] = [];
  let full: Manifest[] = [];
  beforeAll(async () => {
    if (skip) return;
    [base, full] = await Promise.all([render(BASE), render(overlay.dir)]);
  });
  afterAll(() => overlay.remove());

  it('every file the kustomizations list exists', () => {
    expect(missingListedFiles(BASE)).toEqual([]);
    expect(missingListedFiles(DRY_RUN)).toEqual([]);
  });

  it.skipIf(skip)(
    'the base: its RBAC and the CronJob, with the image set, each with the fields the API requires',
    () => {
      expect(base.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
        'ClusterRole/osm-healthcheck-analyze',
        'ClusterRoleBinding/osm-healthcheck-analyze',
        'CronJob/osm-healthcheck-analyze',
        'Role/osm-healthcheck-analyze',
        'RoleBinding/osm-healthcheck-analyze',
        'ServiceAccount/osm-healthcheck-analyze',
      ]);
      for (const object of base) expect(missingFields(object), object.kind).toEqual([]);
      const image = one(base, 'CronJob').spec.jobTemplate.spec.template.spec.containers[0].image;
      expect(image).toMatch(/^osm-healthcheck:\d+\.\d+\.\d+$/);
    },
  );

  it.skipIf(skip)(
    'with the dry-run component: its role and binding, and the CronJob making the round trip there',
    () => {
      const added = full
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .filter((name) => !base.some((o) => `${o.kind}/${o.metadata.name}` === name));
      expect(added.sort()).toEqual([
        'ClusterRole/osm-healthcheck-analyze-dry-run',
        'RoleBinding/osm-healthcheck-analyze-dry-run',
      ]);
      const args = one(full, 'CronJob').spec.jobTemplate.spec.template.spec.containers[0].args;
      const namespace = one(full, 'RoleBinding', 'osm-healthcheck-analyze-dry-run').metadata.namespace;
      expect(args).toEqual(['analyze', '-A', '--dry-run-namespace', namespace]);
    },
  );
});

describe('deploy/analyze components for analyze --probes', () => {
  const skip = skipWithoutKubectl('deploy/analyze probes components');
  const PROBES = join(BASE, 'components/probes');
  const METRICS = join(BASE, 'components/companion-metrics');
  const overlays = [PROBES, METRICS].map((c) => tempOverlay({ resources: [BASE], components: [c] }));
  let rendered: Manifest[][] = [];
  beforeAll(async () => {
    if (skip) return;
    rendered = await Promise.all(overlays.map((o) => render(o.dir)));
  });
  afterAll(() => {
    for (const o of overlays) o.remove();
  });

  it('every file they list exists', () => {
    expect(missingListedFiles(PROBES)).toEqual([]);
    expect(missingListedFiles(METRICS)).toEqual([]);
  });

  it('components/probes: list services and events, nothing else; components/companion-metrics: those and get pods/proxy', () => {
    const probes = read('deploy/analyze/components/probes/rbac.yaml');
    expect(grants(one(probes, 'ClusterRole'))).toEqual(['/events[*] list', '/services[*] list']);
    const metrics = read('deploy/analyze/components/companion-metrics/rbac.yaml');
    expect(grants(one(metrics, 'ClusterRole'))).toEqual([
      '/events[*] list',
      '/pods/proxy[*] get',
      '/services[*] list',
    ]);
    for (const objects of [probes, metrics])
      expect(one(objects, 'ClusterRoleBinding').subjects).toEqual([subject]);
  });

  it.each([
    'deploy/analyze/components/probes/rbac.yaml',
    'deploy/analyze/components/companion-metrics/rbac.yaml',
  ])('each rule of %s says what it is for', (file) => {
    for (const { comment, resources } of ruleComments(readFileSync(join(ROOT, file), 'utf8'))) {
      const words = comment.toLowerCase().replaceAll(/[^a-z/]/g, '');
      for (const resource of resources)
        expect(words.includes(resource.replace(/s$/, '')), comment).toBe(true);
    }
  });

  it.skipIf(skip)(
    'the CronJob runs analyze --probes, with --companion-metrics where that component is used',
    () => {
      const args = rendered.map(
        (objects) => one(objects, 'CronJob').spec.jobTemplate.spec.template.spec.containers[0].args,
      );
      expect(args).toEqual([
        ['analyze', '-A', '--probes'],
        ['analyze', '-A', '--probes', '--companion-metrics', '200'],
      ]);
    },
  );
});
