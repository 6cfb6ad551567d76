// Issue 23: the webhook never produces a pod the cluster refuses. Pods are created as the API server creates them
// (the mutating webhook's patch applied, then the PodSecurity plugin's checks for the namespace's labels:
// test/helpers/pod-security.ts), against namespaces the webhook learns from the stand-in API server's list and
// watch, under the RBAC of deploy/webhook/rbac.yaml.

import { readFileSync } from 'node:fs';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { injectManifests } from '../../src/manifest/inject.js';
import type { PodSecurityLevel } from '../../src/rewrite/pod-security.js';
import type { AdmissionResponse } from '../../src/webhook/review.js';
import { CACHES_ONLY, type KubeStandin, startKubeStandin } from '../helpers/kube-standin.js';
import { podSecurityRefusal } from '../helpers/pod-security.js';
import { allListed, type Harness, REWRITE, startHarness } from './harness.js';

type Pod = Record<string, unknown> & { metadata: Record<string, unknown>; spec: Record<string, unknown> };
const FAST = { firstMs: 20, maxMs: 100 };
const ISTIO = 'traffic.sidecar.istio.io/excludeInboundPorts';

const review = JSON.parse(
  readFileSync(new URL('../fixtures/webhook/http-get.json', import.meta.url), 'utf8'),
) as { request: { uid: string; namespace: string; object: Pod } };
const plain = review.request.object;

const annotated = (pod: Pod): Pod => ({
  ...pod,
  metadata: { ...pod.metadata, annotations: { [ISTIO]: '15901,15902,15903,15904' } },
});

/** The same pod made to pass "restricted" on its own. */
const restricted = (pod: Pod): Pod => ({
  ...pod,
  spec: {
    ...pod.spec,
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: (pod.spec.containers as Record<string, unknown>[]).map((c) => ({
      ...c,
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    })),
  },
});

const NAMESPACES: Record<string, Record<string, string>> = {
  open: {},
  base: { 'pod-security.kubernetes.io/enforce': 'baseline' },
  strict: {
    'pod-security.kubernetes.io/enforce': 'restricted',
    'pod-security.kubernetes.io/enforce-version': 'v1.30',
  },
  // An invalid level is enforced as restricted (api.PolicyToEvaluate).
  typo: { 'pod-security.kubernetes.io/enforce': 'Baseline' },
};

let standin: KubeStandin;
let harness: Harness;
let uid = 0;

const api = () => ({ url: standin.url, caFile: standin.caFile, tokenFile: standin.tokenFile });

async function webhook(defaultLevel: PodSecurityLevel = 'privileged', watch = true): Promise<Harness> {
  const started = await startHarness({
    podSecurity: { defaultLevel },
    ...(watch ? { kube: { api: api(), backoff: FAST } } : {}),
  });
  // Every cache listed: the pods below are judged with all the webhook knows.
  if (watch) await allListed(started);
  return started;
}

beforeEach(async () => {
  standin = await startKubeStandin(CACHES_ONLY);
  for (const [name, labels] of Object.entries(NAMESPACES)) standin.namespaces.put(name, labels);
  harness = await webhook();
});
afterEach(async () => {
  await harness.close();
  await standin.close();
});

async function admitted(
  target: Harness,
  namespace: string,
  object: unknown,
  kind = { group: '', version: 'v1', kind: 'Pod' },
): Promise<AdmissionResponse> {
  uid += 1;
  const request = { ...review.request, uid: `ps-${uid}`, namespace, kind, object };
  const reply = await target.post({ ...review, request });
  expect(reply.status, reply.body).toBe(200);
  return (JSON.parse(reply.body) as { response: AdmissionResponse }).response;
}

function applied(pod: Pod, response: AdmissionResponse): Pod {
  if (response.patch === undefined) return pod;
  const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as Operation[];
  return jsonpatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
}

/** POST /api/v1/namespaces/NS/pods as the API server runs it: mutating webhook, then PodSecurity. */
async function createPod(target: Harness, namespace: string, pod: Pod) {
  const response = await admitted(target, namespace, pod);
  const result = applied(pod, response);
  const refusal = podSecurityRefusal(
    'web-7d9f8c6b5-x',
    result.spec,
    standin.namespaces.labels(namespace) ?? {},
  );
  return { pod: result, refusal, warnings: response.warnings ?? [] };
}

const names = (pod: Pod, list: 'initContainers' | 'containers') =>
  ((pod.spec[list] ?? []) as { name: string }[]).map((c) => c.name);

describe('no pod the cluster refuses, whatever the namespace enforces', () => {
  const pods = { plain, annotated: annotated(plain), restricted: restricted(annotated(plain)) };
  const cases = Object.keys(NAMESPACES).flatMap((namespace) =>
    Object.entries(pods).map(([name, pod]) => ({ namespace, name, pod })),
  );

  it.each(cases)('$name pod in namespace "$namespace"', async ({ namespace, pod }) => {
    const before = podSecurityRefusal('x', pod.spec, NAMESPACES[namespace] ?? {});
    const { pod: after, refusal, warnings } = await createPod(harness, namespace, pod);
    // Admissible before, admissible after: the webhook is never the cause.
    if (before === undefined) expect(refusal).toBeUndefined();
    const annotatedPod = pod !== plain;
    const companion = names(after, 'containers').includes('osm-healthcheck');
    const init = names(after, 'initContainers').includes('osm-healthcheck-init');
    if (namespace === 'open') {
      expect({ companion, init }).toEqual({ companion: true, init: !annotatedPod });
    } else if (annotatedPod) {
      expect({ companion, init }).toEqual({ companion: true, init: false });
    } else {
      expect(after).toEqual(pod);
      expect(warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^osm-healthcheck: Pod/web-7d9f8c6b5-\\*: left untouched: Pod Security "(baseline|restricted):(latest|v1\\.30)" \\(namespace "${namespace}"\\) refuses our init container's NET_ADMIN, NET_RAW; `,
          ),
        ),
      ]);
    }
  });

  it('patches exactly as inject --pod-security does for the same level', async () => {
    for (const [namespace, level] of [
      ['open', 'privileged'],
      ['base', 'baseline'],
      ['strict', 'restricted'],
    ] as const) {
      for (const pod of [plain, annotated(plain)]) {
        const { pod: after } = await createPod(harness, namespace, pod);
        const podSecurity = {
          state: 'known',
          policy: { level, version: 'latest', source: '--pod-security' },
        } as const;
        const { output } = injectManifests(JSON.stringify(pod), { ...REWRITE, podSecurity }, 'json');
        expect(after).toEqual(JSON.parse(output));
      }
    }
  });

  it('would have caught the refusal of the issue: the init container in a "baseline" namespace', async () => {
    // A webhook that cannot see namespace labels (no watch) takes every namespace to be privileged.
    const blind = await webhook('privileged', false);
    try {
      const { refusal } = await createPod(blind, 'base', plain);
      expect(refusal).toBe(
        'pods "web-7d9f8c6b5-x" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "osm-healthcheck-init" must not include "NET_ADMIN", "NET_RAW" in securityContext.capabilities.add)',
      );
    } finally {
      await blind.close();
    }
  });

  it('a Deployment applied in a "baseline" namespace: the warning shows at kubectl apply', async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'base' },
      spec: { selector: {}, template: { metadata: {}, spec: plain.spec } },
    };
    const response = await admitted(harness, 'base', deployment, {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
    });
    expect(response.patch).toBeUndefined();
    expect(response.warnings).toEqual([
      expect.stringMatching(
        /^osm-healthcheck: Deployment\/web: left untouched: Pod Security "baseline:latest" \(namespace "base"\)/,
      ),
    ]);
  });
});

describe('the namespace watch', () => {
  const initOf = async (namespace: string) =>
    names((await createPod(harness, namespace, plain)).pod, 'initContainers').includes(
      'osm-healthcheck-init',
    );

  it('follows relabelled, new and deleted namespaces without listing again', async () => {
    expect(await initOf('open')).toBe(true);
    standin.namespaces.put('open', { 'pod-security.kubernetes.io/enforce': 'baseline' });
    await expect.poll(() => initOf('open')).toBe(false);
    // Not seen yet: nothing the namespace might refuse.
    const unseen = await createPod(harness, 'fresh', plain);
    expect(unseen.pod).toEqual(plain);
    expect(unseen.warnings[0]).toContain(
      'the Pod Security level of namespace "fresh" is not known (not in the namespace watch yet)',
    );
    standin.namespaces.put('fresh', {});
    await expect.poll(() => initOf('fresh')).toBe(true);
    standin.namespaces.put('fresh', undefined);
    await expect.poll(() => initOf('fresh')).toBe(false);
    expect(standin.namespaces.requests.filter((r) => r === 'list')).toHaveLength(1);
  });

  it('watches again from the last bookmark when the API server ends the watch', async () => {
    await expect.poll(() => standin.namespaces.openWatches()).toBe(1);
    standin.namespaces.put('other', {});
    standin.namespaces.bookmark();
    const [, listed] = standin.namespaces.requests;
    await expect.poll(() => initOf('other')).toBe(true);
    standin.namespaces.endWatches();
    await expect.poll(() => standin.namespaces.requests.length).toBe(3);
    const rewatch = standin.namespaces.requests[2];
    expect(rewatch).toMatch(/^watch \d+$/);
    expect(Number(rewatch?.split(' ')[1])).toBeGreaterThan(Number(listed?.split(' ')[1]));
    expect(standin.namespaces.requests.filter((r) => r === 'list')).toHaveLength(1);
  });

  it('410 Gone: lists again, and keeps answering from the old list meanwhile', async () => {
    await expect.poll(() => standin.namespaces.openWatches()).toBe(1);
    // In one go, before the webhook can watch again: the watch ends, the history it would resume from is
    // compacted away, and a namespace appears that only a new list shows.
    standin.namespaces.endWatches();
    standin.namespaces.compact();
    standin.namespaces.put('late', { 'pod-security.kubernetes.io/enforce': 'restricted' });
    await harness.logLine((l) => l.msg === 'namespace watch expired (410 Gone): listing again');
    await expect.poll(() => standin.namespaces.requests.filter((r) => r === 'list').length).toBe(2);
    expect(await initOf('late')).toBe(false);
    expect(await initOf('open')).toBe(true);
  });

  it('without RBAC for namespaces: one warning per attempt, not ready, pods untouched; then recovers', async () => {
    await harness.close();
    standin.rbac.denied.add('list namespaces');
    harness = await startHarness({
      podSecurity: { defaultLevel: 'privileged' },
      kube: { api: api(), backoff: FAST },
    });
    const failed = await harness.logLine((l) => String(l.msg).startsWith('namespaces not listed'));
    expect(failed).toMatchObject({ level: 'warn', attempt: 1, retryInMs: 20 });
    expect(String(failed.err)).toContain(
      'list namespaces answered 403: namespaces is forbidden: User "system:serviceaccount:osm-healthcheck:osm-healthcheck-webhook" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
    expect((await harness.get('/readyz')).status).toBe(503);
    expect((await createPod(harness, 'open', plain)).pod).toEqual(plain);
    standin.rbac.denied.delete('list namespaces');
    await harness.logLine((l) => l.msg === 'namespaces listed');
    expect(await initOf('open')).toBe(true);
  });

  it('a watch that goes quiet (a half-open connection) is given up and opened again', async () => {
    await harness.close();
    harness = await startHarness({
      podSecurity: { defaultLevel: 'privileged' },
      kube: { api: api(), backoff: FAST, watchSeconds: 1 },
    });
    await harness.logLine((l) => l.msg === 'namespaces listed');
    const lists = () => standin.namespaces.requests.filter((r) => r === 'list').length;
    const watches = () => standin.namespaces.requests.filter((r) => r.startsWith('watch')).length;
    const listed = lists();
    // The API server ends each watch at timeoutSeconds (1 s): watched again at once, never listed again.
    const first = watches();
    await expect.poll(watches).toBeGreaterThan(first + 1);
    standin.outage('hang');
    // The open watch is cut (socket hang up); the next one is accepted and never answered.
    const quiet = await harness.logLine(
      (l) =>
        l.msg === 'namespace watch failed: Pod Security levels may lag until it is back' &&
        String(l.err).includes('nothing within'),
    );
    expect(String(quiet.err)).toMatch(
      /^GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\?watch=1.*: nothing within 2000 ms$/,
    );
    // Meanwhile admissions go on from what was listed.
    expect(await initOf('open')).toBe(true);
    standin.outage(undefined);
    const before = watches();
    await expect.poll(watches).toBeGreaterThan(before);
    expect(lists()).toBe(listed);
  });

  it('--pod-security-default applies to namespaces without the label', async () => {
    await harness.close();
    harness = await webhook('baseline');
    expect(await initOf('open')).toBe(false);
    expect((await createPod(harness, 'open', plain)).warnings[0]).toContain(
      'Pod Security "baseline:latest" (namespace "open", by the cluster default)',
    );
  });
});
