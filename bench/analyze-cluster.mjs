// A meshed cluster for the analyze benchmark, as it looks after a webhook outage and an upgrade: namespaces labelled
// for injection (Pod Security levels, a LimitRange and a ResourceQuota each; bench/cluster-objects.mjs), nodes, and
// in each namespace ten pods of realistic shapes, owned as controllers own them (Deployment -> ReplicaSet -> pod,
// CronJob -> Job -> pod) though no controller runs. Injected pods carry what the project's own `inject` (the built
// CLI) writes into their templates, for the namespace's Pod Security level and rules: the record included.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { limitRangeObject, namespaceObject, resourceQuotaObject } from './cluster-objects.mjs';

/** The image the (stopped) webhook injects, and the one an older release injected. */
export const CURRENT_IMAGE = 'registry.example.com/osm-healthcheck:0.1.0';
export const OLD_IMAGE = 'registry.example.com/osm-healthcheck:0.0.9';
const LEVELS = ['privileged', 'baseline', 'restricted'];

/** An app container every Pod Security level admits, with a readiness and a liveness probe. */
function app(name) {
  return {
    name,
    image: `registry.example.com/shop/${name}:1.4.2`,
    ports: [{ name: 'http', containerPort: 8080 }],
    readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
    livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 10 },
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  };
}

const podSecurity = { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } };
/** The mesh (osm-edge) lets 15901-15904 past its proxy, as docs/pod-security.md asks where no init container may. */
const EXCLUDED = { 'openservicemesh.io/inbound-port-exclusion-list': '15901,15902,15903,15904' };
const template = (name, extra = {}) => ({
  metadata: { labels: { app: name }, annotations: EXCLUDED },
  spec: { securityContext: podSecurity, containers: [app(name)], ...extra },
});
const deployment = (name) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: template(name) },
});
const cronJob = (name) => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: {
    schedule: '0 3 * * *',
    jobTemplate: { spec: { template: template(name, { restartPolicy: 'Never' }) } },
  },
});

/** The workloads of every namespace, as their owners' manifests say them before injection. */
export const WORKLOADS = [deployment('api'), deployment('web'), deployment('legacy'), cronJob('nightly')];

/**
 * `inject` (the built CLI) of WORKLOADS for each Pod Security level and image, with a namespace's LimitRange and
 * ResourceQuota as rules (the templates' mesh annotation lets 15901-15904 past: no init container): the injected
 * objects by `level/image/name`, and the uninjected ones by `plain/name`.
 */
export function injectedShapes(cli, node = process.execPath) {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bench-analyze-'));
  try {
    const input = join(dir, 'workloads.json');
    const rules = join(dir, 'rules.json');
    writeFileSync(input, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: WORKLOADS }));
    writeFileSync(
      rules,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [limitRangeObject('rules'), resourceQuotaObject('rules')],
      }),
    );
    const shapes = new Map(WORKLOADS.map((w) => [`plain/${w.metadata.name}`, w]));
    for (const level of LEVELS) {
      for (const image of [CURRENT_IMAGE, OLD_IMAGE]) {
        const args = [cli, 'inject', '-f', input, '-o', 'json', '--image', image, '--kube-version', '1.36'];
        args.push('--pod-security', level, '--namespace-rules', rules);
        const run = spawnSync(node, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
        if (run.status !== 0) throw new Error(`inject ${args.join(' ')}: ${run.status}: ${run.stderr}`);
        for (const item of JSON.parse(run.stdout).items) {
          if (
            item.metadata.annotations?.['osm-healthcheck/status'] === undefined &&
            podTemplate(item).metadata.annotations?.['osm-healthcheck/status'] === undefined
          )
            throw new Error(
              `inject left ${item.kind}/${item.metadata.name} untouched at ${level}: ${run.stderr}`,
            );
          shapes.set(`${level}/${image}/${item.metadata.name}`, item);
        }
      }
    }
    return shapes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A workload's pod template. */
export const podTemplate = (object) =>
  object.kind === 'CronJob' ? object.spec.jobTemplate.spec.template : object.spec.template;

/**
 * What namespace `i` holds, and the class analyze must put each pod in: `api` (4 pods) covered; `web` (3) stale in
 * every fifth namespace (an older image), else covered; `legacy` (1) uncovered in every tenth (created while the
 * webhook was down), else covered; `nightly` (a CronJob's Job, 1 pod) covered; `debug` (a bare pod, no probe)
 * untouched.
 */
export function namespacePlan(i) {
  const level = LEVELS[i % 3];
  const current = `${level}/${CURRENT_IMAGE}`;
  return {
    namespace: namespaceObject(i),
    limitRange: limitRangeObject(namespaceObject(i).metadata.name),
    resourceQuota: resourceQuotaObject(namespaceObject(i).metadata.name),
    workloads: [
      { shape: `${current}/api`, pods: 4, class: 'covered' },
      {
        shape: i % 5 === 1 ? `${level}/${OLD_IMAGE}/web` : `${current}/web`,
        pods: 3,
        class: i % 5 === 1 ? 'stale' : 'covered',
      },
      {
        shape: i % 10 === 0 ? 'plain/legacy' : `${current}/legacy`,
        pods: 1,
        class: i % 10 === 0 ? 'uncovered' : 'covered',
      },
      { shape: `${current}/nightly`, pods: 1, class: 'covered' },
    ],
  };
}

/** The classes analyze must count over namespaces [0, n): each pod of namespacePlan, and one untouched `debug`. */
export function expectedCounts(n) {
  const counts = { covered: 0, stale: 0, uncovered: 0, untouched: n, failing: 0 };
  for (let i = 0; i < n; i++) {
    for (const w of namespacePlan(i).workloads) counts[w.class] += w.pods;
  }
  return counts;
}

/** The bare `debug` pod: no probe, so nothing to rewrite. */
export function debugPod(namespace) {
  const container = { ...app('debug'), readinessProbe: undefined, livenessProbe: undefined };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'debug', namespace, labels: { app: 'debug' } },
    spec: { securityContext: podSecurity, containers: [JSON.parse(JSON.stringify(container))] },
  };
}

const ownerRef = (object) => ({
  apiVersion: object.apiVersion,
  kind: object.kind,
  name: object.metadata.name,
  uid: object.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});

/** The ReplicaSet a Deployment's controller would make for `deployment` (as the API server returned it). */
export function replicaSetOf(deployment, hash) {
  const template = structuredClone(deployment.spec.template);
  template.metadata.labels = { ...template.metadata.labels, 'pod-template-hash': hash };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${deployment.metadata.name}-${hash}`,
      namespace: deployment.metadata.namespace,
      labels: template.metadata.labels,
      ownerReferences: [ownerRef(deployment)],
    },
    spec: {
      replicas: deployment.spec.replicas,
      selector: { matchLabels: { ...deployment.spec.selector.matchLabels, 'pod-template-hash': hash } },
      template,
    },
  };
}

/** The Job a CronJob's controller would make for `cronJob` (as the API server returned it). */
export function jobOf(cronJob, suffix) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: `${cronJob.metadata.name}-${suffix}`,
      namespace: cronJob.metadata.namespace,
      ownerReferences: [ownerRef(cronJob)],
    },
    spec: structuredClone(cronJob.spec.jobTemplate.spec),
  };
}

/** Pod `name` of `owner` (a ReplicaSet or Job as the API server returned it), from its template. */
export function podOf(owner, name) {
  const { metadata, spec } = owner.spec.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: owner.metadata.namespace,
      labels: metadata.labels,
      ...(metadata.annotations === undefined ? {} : { annotations: metadata.annotations }),
      ownerReferences: [ownerRef(owner)],
    },
    spec,
  };
}
