// deploy/analyze's RBAC on a real kube-apiserver: the built CLI's `analyze` run with a kubeconfig for its
// ServiceAccount (a token user of that name, as RBAC's ServiceAccount subjects match it). With the read-only roles
// every read check runs, the serving certificate's included (as the webhook publishes it: no Secret is read), and
// only the opt-in round trip says "cannot ...: needs ..."; with its component too, none does; each rule taken away makes the check that needs it say so; with no binding at all every check says what it
// needs, with no stack trace. With the probes component, `analyze --probes` reads all it reads, and without each of
// its rules says which list it could not make (without events: that the restarts stand unattributed). And the
// CronJob's pod passes restricted Pod Security as the API server enforces it.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SERVING_CERT_ANNOTATION } from '../../src/webhook/tls/published-cert.js';
import { type Exit, ROOT, runCli } from '../helpers/cli.js';
import { ENVTEST_NEEDS, type Envtest, type EnvtestUser, startEnvtest } from '../helpers/envtest.js';
import type { KubeClient } from '../helpers/envtest-client.js';
import { makeNamespace } from '../helpers/envtest-namespace.js';
import { kubeconfigFor } from '../helpers/kubeconfig.js';
import { grants } from '../helpers/rbac-grants.js';
import { skipWithout } from '../helpers/system-tools.js';
import { makeTestCert } from '../helpers/tls.js';
import { writeRestart } from './probes/probes-cluster.js';

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: manifests, walked by the field names Kubernetes defines
type Manifest = Record<string, any>;

const NAMESPACE = 'osm-healthcheck';
const LABELLED = 'demo';
const read = (path: string): Manifest[] =>
  parseAllDocuments(readFileSync(join(ROOT, path), 'utf8')).map((d) => d.toJS() as Manifest);
const rbac = read('deploy/analyze/rbac.yaml');
const optional = read('deploy/analyze/components/dry-run/rbac.yaml');
const account = rbac.find((o) => o.kind === 'ServiceAccount') as Manifest;
const serviceAccountUser = (name: string): EnvtestUser => ({
  name: `system:serviceaccount:${NAMESPACE}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`],
});
const ANALYZE_USER = serviceAccountUser(account.metadata.name);
const NOBODY = serviceAccountUser('unbound');
const probesRbac = read('deploy/analyze/components/probes/rbac.yaml');
const probesRole = probesRbac.find((o) => o.kind === 'ClusterRole') as Manifest;
/** Each grant of the probes component, one at a time: a user with the read-only ClusterRole and the rest of it. */
const PROBES_WITHOUT = grants(probesRole).map((grant) => ({
  grant,
  user: { name: `probes without ${grant}` },
}));

/** Each grant of the read-only roles, one at a time: the role it is in, and the rules without it. */
const roles = rbac.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
const WITHOUT = roles.flatMap((role) =>
  grants(role).map((grant) => ({ grant, role, user: { name: `without ${grant}` } as EnvtestUser })),
);

/** A rule list with one grant (`group/resource[names] verb`) taken out: the rule split by resource, that verb gone. */
function rulesWithout(role: Manifest, grant: string): Manifest[] {
  const [group, resource, verb] = /^(.*)\/(\w+)\[.*\] (\w+)$/.exec(grant)?.slice(1) ?? [];
  return (role.rules as Manifest[]).flatMap((rule): Manifest[] => {
    if (!rule.apiGroups.includes(group) || !rule.resources.includes(resource) || !rule.verbs.includes(verb))
      return [rule];
    return (rule.resources as string[]).flatMap((r): Manifest[] => {
      if (r !== resource) return [{ ...rule, resources: [r] }];
      const verbs = (rule.verbs as string[]).filter((v) => v !== verb);
      return verbs.length === 0 ? [] : [{ ...rule, resources: [r], verbs }];
    });
  });
}

const RBAC = 'rbac.authorization.k8s.io/v1';
function collection(object: Manifest): string {
  const ns = object.metadata.namespace as string | undefined;
  switch (object.kind) {
    case 'ServiceAccount':
      return `/api/v1/namespaces/${ns}/serviceaccounts`;
    case 'Role':
    case 'RoleBinding':
      return `/apis/${RBAC}/namespaces/${ns}/${object.kind.toLowerCase()}s`;
    default:
      return `/apis/${RBAC}/${object.kind.toLowerCase()}s`;
  }
}

const apply = async (client: KubeClient, objects: Manifest[]) => {
  for (const object of objects) await client.create(collection(object), object);
};

/** The install as deploy/webhook makes it, stopped (no pod runs): what analyze reads, all there to be read. */
async function installWebhook(client: KubeClient): Promise<void> {
  const cert = makeTestCert('osm-healthcheck-webhook.osm-healthcheck.svc', [
    'DNS:osm-healthcheck-webhook.osm-healthcheck.svc',
  ]);
  try {
    const [config] = read('deploy/webhook/mutating-webhook.yaml') as [Manifest];
    for (const hook of config.webhooks)
      hook.clientConfig.caBundle = Buffer.from(cert.cert).toString('base64');
    // As the webhook publishes the certificate it serves (src/webhook/tls/published-cert.ts).
    config.metadata.annotations = { [SERVING_CERT_ANNOTATION]: cert.cert };
    await client.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', config);
    const deployment = read('deploy/webhook/deployment.yaml').find((o) => o.kind === 'Deployment');
    await client.create(`/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, deployment);
  } finally {
    cert.cleanup();
  }
}

/** A labelled namespace with one pod of a Deployment's ReplicaSet, a LimitRange, and a CronJob's Job. */
async function populate(client: KubeClient): Promise<void> {
  await makeNamespace(client, LABELLED, { 'osm-healthcheck-injection': 'enabled' }, [
    {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults' },
      spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '10m' } }] },
    },
  ]);
  const template = {
    metadata: { labels: { app: 'web' } },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/web:1',
          readinessProbe: { httpGet: { path: '/', port: 8080 } },
        },
      ],
    },
  };
  const rs = await client.create(`/apis/apps/v1/namespaces/${LABELLED}/replicasets`, {
    metadata: { name: 'web-5d8f7c9b4' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template },
  });
  const meta = rs.metadata as Json;
  await client.create(`/api/v1/namespaces/${LABELLED}/pods`, {
    metadata: {
      name: 'web-5d8f7c9b4-x7k2p',
      labels: { app: 'web' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: meta.name, uid: meta.uid, controller: true },
      ],
    },
    spec: template.spec,
  });
  await client.create(`/apis/batch/v1/namespaces/${LABELLED}/jobs`, {
    metadata: { name: 'nightly-29312180' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'n', image: 'busybox:1.36' }] } },
    },
  });
}

const skip = skipWithout('analyze RBAC on a real kube-apiserver', ENVTEST_NEEDS);

describe.skipIf(skip)('deploy/analyze RBAC against a real kube-apiserver', () => {
  let env: Envtest;
  let dir: string;

  beforeAll(async () => {
    env = await startEnvtest([
      ANALYZE_USER,
      NOBODY,
      ...WITHOUT.map((w) => w.user),
      ...PROBES_WITHOUT.map((w) => w.user),
    ]);
    dir = join(tmpdir(), `osm-hc-analyze-rbac-${process.pid}`);
    await makeNamespace(env.admin, NAMESPACE, {}, []);
    await apply(env.admin, rbac);
    await installWebhook(env.admin);
    await populate(env.admin);
    // One user per grant: the read-only roles but for it, bound to that user alone.
    for (const [k, { grant, role, user }] of WITHOUT.entries()) {
      const name = `analyze-without-${k}`;
      const meta = { ...role.metadata, name };
      await apply(env.admin, [
        { ...role, metadata: meta, rules: rulesWithout(role, grant) },
        ...roles
          .filter((other) => other !== role)
          .map((other) => ({ ...other, metadata: { ...other.metadata, name } })),
      ]);
      for (const bound of roles) {
        const kind = bound.kind === 'Role' ? 'RoleBinding' : 'ClusterRoleBinding';
        await apply(env.admin, [
          {
            apiVersion: RBAC,
            kind,
            metadata: { ...bound.metadata, name },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: bound.kind, name },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user.name }],
          },
        ]);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await env?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** `analyze ...args -o json` as `user`: its exit, and the detail of every check that could not be made. */
  async function analyzeAs(user: EnvtestUser, args: string[]): Promise<Exit & { cannot: string[] }> {
    const file = join(tmpdir(), `osm-hc-kubeconfig-${process.pid}-${user.name.replaceAll(/\W/g, '_')}`);
    writeFileSync(file, kubeconfigFor(env.url, readFileSync(env.tokenFile(user.name), 'utf8'), env.caFile));
    try {
      const exit = await runCli(['analyze', '--kubeconfig', file, ...args], { timeoutMs: 30_000 });
      expect(exit.stderr, 'no stack trace').not.toMatch(/^\s+at /m);
      const report = args.includes('json')
        ? (JSON.parse(exit.stdout) as { checks: { detail: string }[] })
        : undefined;
      const cannot = (report?.checks ?? [])
        .map((c) => c.detail)
        .filter((d) => /^cannot (check|make)/.test(d));
      return { ...exit, cannot };
    } finally {
      rmSync(file, { force: true });
    }
  }

  it('with the read-only roles, every check runs but the round trip; the certificate checked with no Secret', async () => {
    const exit = await analyzeAs(ANALYZE_USER, ['-A', '-o', 'json']);
    expect(exit.cannot.sort()).toEqual([
      `cannot make the round trip: needs create on pods in ${LABELLED} (a server-side dry run: nothing is stored)`,
    ]);
    // The stopped webhook (no ready replica, no endpoint) and the uncovered pod need action.
    expect(exit.code).toBe(1);
    const report = JSON.parse(exit.stdout);
    const checks = new Map(report.checks.map((c: Json) => [c.name, c]));
    expect(checks.get('ca-bundle')).toMatchObject({ status: 'ok' });
    // The test certificate lives two days: within the week the check warns of.
    expect(checks.get('certificate-expiry')).toMatchObject({ status: 'warn' });
    expect(report.counts.uncovered).toBe(1);
    expect(report.groups.find((g: Json) => g.class === 'uncovered').fix).toBe(
      `kubectl -n ${LABELLED} delete pod web-5d8f7c9b4-x7k2p`,
    );
  });

  it('with -n, the namespace is read by a get', async () => {
    const exit = await analyzeAs(ANALYZE_USER, ['-n', LABELLED, '-o', 'json', '--no-dry-run']);
    expect(exit.cannot).toEqual([]);
  });

  it.each(WITHOUT.map((w) => [w.grant, w]))(
    'without %s, the check that needs it says so',
    async (grant, w) => {
      const [, resource, verb] = /^.*\/(\w+)\[.*\] (\w+)$/.exec(grant) ?? [];
      const args = grant.startsWith('/namespaces[*] get') ? ['-n', LABELLED] : ['-A'];
      const exit = await analyzeAs(w.user, [...args, '-o', 'json', '--no-dry-run']);
      const needs = exit.cannot.filter((d) => new RegExp(`needs ${verb} (\\S+ )?${resource}\\b`).test(d));
      expect(needs, exit.cannot.join('\n')).not.toEqual([]);
    },
  );

  it('with the optional component too, no check says it cannot', async () => {
    await apply(env.admin, optional);
    const exit = await analyzeAs(ANALYZE_USER, ['-A', '-o', 'json']);
    expect(exit.cannot).toEqual([]);
    // The round trip reached the API server, which could not call the stopped webhook.
    const report = JSON.parse(exit.stdout);
    expect(report.checks.find((c: Json) => c.name === 'dry-run').status).toBe('fail');
  });

  it('with no binding: a "cannot check X: needs Y" line for each check, no stack trace, and exit 1', async () => {
    const exit = await analyzeAs(NOBODY, ['-A']);
    expect(exit.stdout).toContain(
      'cannot check the webhook configuration: needs get mutatingwebhookconfigurations/osm-healthcheck',
    );
    expect(exit.stdout).toContain('cannot check which namespaces are labelled: needs list namespaces');
    expect(exit.stdout).toContain('cannot check the round trip: needs list namespaces');
    expect(exit.code).toBe(1);
  });

  describe('with the probes component', () => {
    const clusterRole = roles.find((r) => r.kind === 'ClusterRole') as Manifest;
    /** `analyze --probes -A -o json` as `user`: its exit and its notes. */
    const probesAs = async (user: EnvtestUser) => {
      const exit = await analyzeAs(user, ['--probes', '-A', '-o', 'json']);
      return { ...exit, notes: (JSON.parse(exit.stdout) as { notes: string[] }).notes };
    };

    beforeAll(async () => {
      await apply(env.admin, probesRbac);
      // A pod with a liveness probe, and kubelet's record of a restart, whose events would say why.
      await makeNamespace(env.admin, 'probed', {}, []);
      await env.admin.create('/api/v1/namespaces/probed/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'app' },
        spec: {
          containers: [{ name: 'app', image: 'app', livenessProbe: { httpGet: { path: '/', port: 8080 } } }],
        },
      });
      await writeRestart(env, 'probed', 'app');
      for (const [k, { grant, user }] of PROBES_WITHOUT.entries()) {
        const name = `analyze-probes-without-${k}`;
        const bind = (role: string) => ({
          apiVersion: RBAC,
          kind: 'ClusterRoleBinding',
          metadata: { name: `${name}-${role}` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user.name }],
        });
        await apply(env.admin, [
          {
            ...probesRole,
            metadata: { ...probesRole.metadata, name },
            rules: rulesWithout(probesRole, grant),
          },
          bind(name),
          bind(clusterRole.metadata.name),
        ]);
      }
    });

    it('reads every list it makes: no note of a refusal', async () => {
      const { notes, code } = await probesAs(ANALYZE_USER);
      expect(notes.filter((n) => n.startsWith('cannot'))).toEqual([]);
      expect(code).toBe(0);
    });

    it.each(PROBES_WITHOUT.map((w) => [w.grant, w]))(
      'without %s, it says which list it could not make',
      async (grant, w) => {
        const resource = /^\/(\w+)\[/.exec(grant)?.[1];
        const { notes, code } = await probesAs(w.user);
        expect(
          notes.filter((n) => n.startsWith(`cannot list ${resource} in all namespaces: `)),
          notes.join('\n'),
        ).toHaveLength(1);
        if (resource === 'events') {
          expect(notes).toContain(
            "probed/Pod/app: restarts of app on app stand unattributed: kubelet's events could not be read",
          );
        }
        expect(code).toBe(0);
      },
    );
  });

  it("the CronJob's pod passes restricted Pod Security, as the API server enforces it", async () => {
    const cronJob = read('deploy/analyze/cronjob.yaml')[0] as Manifest;
    await makeNamespace(env.admin, 'restricted', { 'pod-security.kubernetes.io/enforce': 'restricted' }, []);
    const template = cronJob.spec.jobTemplate.spec.template;
    const tried = await env.admin.dryRunPod('restricted', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'analyze', ...template.metadata },
      spec: { ...template.spec, serviceAccountName: undefined },
    });
    expect(tried.admitted, tried.admitted ? '' : tried.message).toBe(true);
    expect(tried.warnings).toEqual([]);
  });
});
