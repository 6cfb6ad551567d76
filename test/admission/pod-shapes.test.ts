// Every pod shape the stand-in suites cover (test/fixtures/webhook/*.json, test/fixtures/inject/*.yaml), through
// each real kube-apiserver the project is checked on (1.26, 1.32, 1.36) in a privileged, a baseline and a
// restricted namespace, with the companion first and asked as a native sidecar (which 1.26 does not have: the
// rewrite, told the server's version, puts it first there): whatever the API server admits before the rewrite (pods, and the workloads `inject` writes) it
// admits after. The webhook's pods go through rewritePodSpec, the inject fixtures through injectManifests.

import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { injectManifests } from '../../src/manifest/inject.js';
import { ENVTEST_SERVERS, type Envtest, envtestNeeds, startEnvtest } from '../helpers/envtest.js';
import {
  factsOptions,
  injectPod,
  makeNamespace,
  type NamespaceFacts,
  namespaceFacts,
  type Pod,
} from '../helpers/envtest-namespace.js';
import { skipWithout } from '../helpers/system-tools.js';

type Json = Record<string, unknown>;

const NAMESPACES: Record<string, Record<string, string>> = {
  open: {},
  base: { 'pod-security.kubernetes.io/enforce': 'baseline' },
  strict: { 'pod-security.kubernetes.io/enforce': 'restricted' },
};
const PLACEMENTS = [
  { placement: 'first', nativeSidecar: false },
  { placement: 'native', nativeSidecar: true },
];
// Broken on purpose (a duplicate container name, not JSON): the webhook's error paths, not shapes.
const NOT_SHAPES = new Set(['invalid-pod.json', 'malformed.json']);

const WEBHOOK_DIR = new URL('../fixtures/webhook/', import.meta.url);
const INJECT_DIR = new URL('../fixtures/inject/', import.meta.url);

const webhookPods = readdirSync(WEBHOOK_DIR)
  .filter((file) => file.endsWith('.json') && !NOT_SHAPES.has(file))
  .flatMap((file) => {
    const review = JSON.parse(readFileSync(new URL(file, WEBHOOK_DIR), 'utf8')) as {
      request?: { kind?: { kind?: string }; object?: Pod };
    };
    const pod = review.request?.object;
    return review.request?.kind?.kind === 'Pod' && pod !== undefined ? [{ file, pod }] : [];
  });
/** The pod made to pass "restricted" on its own, and 15901-15904 excluded from the mesh: the companion then goes in everywhere. */
function hardened(pod: Pod): Pod {
  const harden = (c: Json): Json => ({
    ...c,
    securityContext: {
      ...(c.securityContext as Json | undefined),
      allowPrivilegeEscalation: false,
      capabilities: {
        ...((c.securityContext as Json | undefined)?.capabilities as Json | undefined),
        drop: ['ALL'],
      },
    },
  });
  const annotations = {
    ...pod.metadata.annotations,
    'traffic.sidecar.istio.io/excludeInboundPorts': '15901,15902,15903,15904',
  };
  return {
    ...pod,
    metadata: { ...pod.metadata, annotations },
    spec: {
      ...pod.spec,
      securityContext: {
        ...(pod.spec.securityContext as Json | undefined),
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: (pod.spec.containers ?? []).map(harden),
      ...(pod.spec.initContainers ? { initContainers: pod.spec.initContainers.map(harden) } : {}),
    },
  };
}
const shapes = webhookPods.flatMap(({ file, pod }) => [
  { file, shape: 'as sent', pod },
  { file, shape: 'hardened, mesh-excluded', pod: hardened(pod) },
]);

const injectFiles = readdirSync(INJECT_DIR).filter(
  (f) => f.endsWith('.yaml') && !f.endsWith('.injected.yaml'),
);

const matrix = <T extends object>(items: T[]) =>
  items.flatMap((item) =>
    Object.keys(NAMESPACES).flatMap((namespace) => PLACEMENTS.map((p) => ({ ...item, namespace, ...p }))),
  );

/** The object as created in `namespace` (fixtures name their own). */
function placed(object: Json, namespace: string): Json {
  return { ...object, metadata: { ...(object.metadata as Json), namespace } };
}

/** Whether anything in `value` is an init container with `restartPolicy: Always` (a native sidecar). */
function hasNativeSidecar(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasNativeSidecar);
  if (typeof value !== 'object' || value === null) return false;
  const object = value as Json;
  const inits = Array.isArray(object.initContainers) ? (object.initContainers as Json[]) : [];
  if (inits.some((c) => c?.restartPolicy === 'Always')) return true;
  return Object.values(object).some(hasNativeSidecar);
}

/**
 * What an open namespace makes of the original: admitted, except a pod with native sidecars before 1.29, which
 * drops `restartPolicy` and refuses the probes of what is then a plain init container: nothing to compare there.
 */
const expectedOnItsOwn = (object: unknown, minor: number) =>
  hasNativeSidecar(object) && minor < 29
    ? expect.stringMatching(/may not be set for init containers/)
    : 'admitted';

describe.each(ENVTEST_SERVERS.map((server) => ({ server, version: server.version })))(
  'kube-apiserver $version',
  ({ server }) => {
    const skip = skipWithout(
      `admission against a real kube-apiserver ${server.version} (pod shapes)`,
      envtestNeeds(server),
    );

    let env: Envtest;
    const facts = new Map<string, NamespaceFacts>();

    beforeAll(async () => {
      if (skip) return;
      env = await startEnvtest([], server);
      for (const [name, labels] of Object.entries(NAMESPACES)) {
        await makeNamespace(env.admin, name, labels, []);
        facts.set(name, await namespaceFacts(env.admin, name));
      }
    }, 120_000);
    afterAll(async () => {
      await env?.stop();
    });

    const verdict = (result: { admitted: boolean; message?: string }) =>
      result.admitted ? 'admitted' : (result.message ?? '');

    describe.skipIf(skip)('webhook fixtures: admitted before, admitted after', () => {
      it.for(matrix(shapes))(
        '$file ($shape) in $namespace, companion asked $placement',
        async (c, context) => {
          const pod = placed(c.pod, c.namespace) as Pod;
          const before = await env.admin.dryRunPod(c.namespace, pod);
          if (c.namespace === 'open')
            expect(verdict(before), 'the original pod (precondition)').toEqual(
              expectedOnItsOwn(pod, server.minor),
            );
          if (!before.admitted) return context.skip(`refused on its own: ${before.message}`);
          const options = factsOptions(facts.get(c.namespace) as NamespaceFacts, {
            placement: c.nativeSidecar ? 'native-sidecar' : 'first',
          });
          const { pod: injected, result } = injectPod(pod, options);
          expect(verdict(await env.admin.dryRunPod(c.namespace, injected)), 'the injected pod').toBe(
            'admitted',
          );
          // Excluded from the mesh, it needs no init container: Pod Security is no reason to leave it untouched.
          if (c.shape !== 'as sent') expect(result.warnings.join('\n')).not.toMatch(/Pod Security/);
        },
      );
    });

    describe.skipIf(skip)(
      'inject fixtures: the workloads and their pods, admitted before, admitted after',
      () => {
        it.for(matrix(injectFiles.map((file) => ({ file }))))(
          '$file in $namespace, companion asked $placement',
          async (c, context) => {
            const source = readFileSync(new URL(c.file, INJECT_DIR), 'utf8');
            const options = factsOptions(facts.get(c.namespace) as NamespaceFacts, {
              placement: c.nativeSidecar ? 'native-sidecar' : 'first',
            });
            const injected = JSON.parse(injectManifests(source, options, 'json').output) as Json;
            const pairs = zip(
              creatable(objectsOf(parseAllDocuments(source).map((d) => d.toJS()))),
              creatable(objectsOf([injected])),
            );
            let checked = 0;
            for (const [original, rewritten] of pairs) {
              for (const [path, before, after] of requests(original, rewritten, c.namespace)) {
                const first = await env.admin.dryRun(path, before);
                if (c.namespace === 'open')
                  expect(verdict(first), `${path}: the original (precondition)`).toEqual(
                    expectedOnItsOwn(before, server.minor),
                  );
                if (!first.admitted) continue;
                checked += 1;
                expect(verdict(await env.admin.dryRun(path, after)), `${path}: the injected`).toBe(
                  'admitted',
                );
              }
            }
            if (checked === 0) context.skip('nothing in it is admitted here on its own');
          },
        );
      },
    );
  },
);

/** Lists flattened, in order. */
function objectsOf(values: unknown[]): Json[] {
  return values.flatMap((value) => {
    const object = (value ?? {}) as Json;
    return object.kind === 'List' ? objectsOf((object.items ?? []) as unknown[]) : [object];
  });
}

const COLLECTIONS: Record<string, string> = {
  'v1 Pod': '/api/v1/namespaces/NS/pods',
  'v1 ReplicationController': '/api/v1/namespaces/NS/replicationcontrollers',
  'apps/v1 Deployment': '/apis/apps/v1/namespaces/NS/deployments',
  'apps/v1 StatefulSet': '/apis/apps/v1/namespaces/NS/statefulsets',
  'apps/v1 DaemonSet': '/apis/apps/v1/namespaces/NS/daemonsets',
  'apps/v1 ReplicaSet': '/apis/apps/v1/namespaces/NS/replicasets',
  'batch/v1 Job': '/apis/batch/v1/namespaces/NS/jobs',
  'batch/v1 CronJob': '/apis/batch/v1/namespaces/NS/cronjobs',
};

const collectionOf = (object: Json) => COLLECTIONS[`${String(object.apiVersion)} ${String(object.kind)}`];

/** The kinds the API server here serves (not a ConfigMap's data, nor another project's Job). */
function creatable(objects: Json[]): Json[] {
  return objects.filter((object) => collectionOf(object) !== undefined);
}

function zip(originals: Json[], rewritten: Json[]): [Json, Json][] {
  expect(rewritten.length, 'inject keeps every object').toBe(originals.length);
  return originals.map((original, index) => [original, rewritten[index] as Json]);
}

/** The object itself, and for a workload a pod made from its template (Pod Security enforces on pods only). */
function requests(original: Json, rewritten: Json, namespace: string): [string, Json, Json][] {
  const path = (collectionOf(original) ?? '').replace('NS', namespace);
  const own: [string, Json, Json] = [path, placed(original, namespace), placed(rewritten, namespace)];
  if (original.kind === 'Pod') return [own];
  const pods = `/api/v1/namespaces/${namespace}/pods`;
  return [own, [pods, templatePod(original, namespace), templatePod(rewritten, namespace)]];
}

function templatePod(workload: Json, namespace: string): Json {
  const spec = workload.spec as Json;
  const template = (
    workload.kind === 'CronJob' ? ((spec.jobTemplate as Json).spec as Json).template : spec.template
  ) as Json;
  const metadata = (template.metadata ?? {}) as Json;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...metadata, generateName: 'from-template-', namespace },
    spec: template.spec,
  };
}
