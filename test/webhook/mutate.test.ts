// POST /mutate over real HTTPS: for every fixture the returned patch, applied with fast-json-patch, gives exactly
// the pod `inject` makes of the same pod; requests the webhook cannot read are answered 400 with the reason.

import { readFileSync } from 'node:fs';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { injectManifests } from '../../src/manifest/inject.js';
import { RECORD_ANNOTATION } from '../../src/rewrite/record.js';
import type { PodSpec } from '../../src/rewrite/types.js';
import { buildWebhookApp } from '../../src/webhook/app.js';
import type { AdmissionResponse } from '../../src/webhook/review.js';
import { makeTestCert } from '../helpers/tls.js';
import { osmEdgeInject } from '../rewrite/osm-edge-injector.js';
import { type Harness, REWRITE, startHarness } from './harness.js';

type Pod = Record<string, unknown>;
interface Review {
  apiVersion: string;
  kind: string;
  request: { uid: string; object: Pod };
  response: AdmissionResponse;
}

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/webhook/${name}.json`, import.meta.url), 'utf8');

/** What `inject -o json` makes of the pod, through the same stream code the CLI runs. */
function injected(pod: Pod): { pod: Pod; warnings: string[] } {
  const { output, warnings } = injectManifests(JSON.stringify(pod), REWRITE, 'json');
  return { pod: JSON.parse(output) as Pod, warnings: warnings.map((w) => `osm-healthcheck: ${w}`) };
}

function operations(response: AdmissionResponse): Operation[] {
  if (response.patch === undefined) return [];
  expect(response.patchType).toBe('JSONPatch');
  return JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as Operation[];
}

/** The pod with the response's patch applied, validating every operation as RFC 6902 demands. */
function patched(pod: Pod, response: AdmissionResponse): Pod {
  return jsonpatch.applyPatch(structuredClone(pod), operations(response), true, false).newDocument;
}

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(() => harness.close());

async function admit(body: unknown): Promise<Review> {
  const answer = await harness.post(body);
  expect(answer.status, answer.body).toBe(200);
  const review = JSON.parse(answer.body) as Review;
  expect(review).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
  return review;
}

describe('every fixture: the patched pod is what inject makes of it', () => {
  it.each([
    { name: 'http-get', result: 'patched', pod: 'web-7d9f8c6b5-*' },
    { name: 'annotated', result: 'patched', pod: 'web-7d9f8c6b5-*' },
    { name: 'https-headers', result: 'patched', pod: 'api-5b8d-*' },
    { name: 'tcp-socket', result: 'patched', pod: 'db-0' },
    { name: 'grpc', result: 'patched', pod: 'orders-6c4f-*' },
    { name: 'warnings', result: 'patched', pod: 'edge-9f8e-*' },
    { name: 'multiple-containers', result: 'patched', pod: 'web-7d9f8c6b5-*' },
    { name: 'native-sidecar', result: 'patched', pod: 'app-3e4f-*' },
    { name: 'osm-edge-rewritten', result: 'unchanged', pod: 'app-8a9b-*' },
    { name: 'job-pod', result: 'unchanged', pod: 'report-*' },
    { name: 'exec', result: 'unchanged', pod: 'worker-1a2b-*' },
    { name: 'no-probes', result: 'unchanged', pod: 'job-4d5e-*' },
    { name: 'opt-out', result: 'skipped', pod: 'legacy-2c3d-*' },
  ])('$name: $result', async ({ name, result, pod }) => {
    const body = fixture(name);
    const { request } = JSON.parse(body) as Review;
    const { response } = await admit(body);
    const expected = injected(request.object);
    expect(response.uid).toBe(request.uid);
    expect(response.allowed).toBe(true);
    expect(patched(request.object, response)).toEqual(expected.pod);
    expect(response.warnings ?? []).toEqual(expected.warnings);
    expect(response.patch === undefined).toBe(result !== 'patched');
    // The patch touches the pod spec, and the pod's annotations only to add kubectl's default container and the
    // record of the injection.
    for (const op of operations(response)) {
      expect(op.path).toMatch(
        /^\/spec\/|^\/metadata\/annotations(\/kubectl\.kubernetes\.io~1default-container|\/osm-healthcheck~1status)?$/,
      );
    }
    const line = await harness.logLine((l) => l.uid === request.uid);
    expect(line).toMatchObject({ msg: 'admission', namespace: 'shop', pod, operation: 'CREATE', result });
    expect(typeof line.changed).toBe('string');
    expect(typeof line.durationMs).toBe('number');
  });
});

describe('warnings reach kubectl: the AdmissionResponse carries every warning inject prints', () => {
  const UNTOUCHED =
    'restartPolicy Never: left untouched, as the Kubernetes version is not known (no API server to ask): if it is 1.29+, annotate osm-healthcheck/run-to-completion: native-sidecar';

  it("a Job's pod, the version not known: untouched, and the warning says why and what to do", async () => {
    const { response } = await admit(fixture('job-pod'));
    expect(response.patch).toBeUndefined();
    expect(response.warnings).toEqual([`osm-healthcheck: Pod/report-*: ${UNTOUCHED}`]);
  });

  it('the Job itself (kubectl apply): the same warning for its pods, and no patch', async () => {
    const { request } = JSON.parse(fixture('job')) as Review;
    const { response } = await admit(fixture('job'));
    expect(response).toEqual({
      uid: request.uid,
      allowed: true,
      warnings: [`osm-healthcheck: Job/report: ${UNTOUCHED}`],
    });
    expect(await harness.logLine((l) => l.uid === request.uid)).toMatchObject({
      result: 'unchanged',
      changed: 'Job: warnings only, its pods are patched as they are created',
      warnings: [`Job/report: ${UNTOUCHED}`],
    });
  });

  it('a CronJob, opted-out and annotated templates: the same rules as inject', async () => {
    const { request } = JSON.parse(fixture('job')) as Review;
    const job = request.object as { spec: Pod };
    const cronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: { schedule: '0 3 * * *', jobTemplate: { spec: job.spec } },
    };
    const base = JSON.parse(fixture('job')) as { request: Record<string, unknown> };
    const review = (object: unknown, uid: string) => ({
      ...base,
      request: { ...base.request, uid, kind: { group: 'batch', version: 'v1', kind: 'CronJob' }, object },
    });
    const cron = await admit(review(cronJob, 'cron-1'));
    expect(cron.response.warnings).toEqual([
      `osm-healthcheck: CronJob/nightly: ${UNTOUCHED.replace('Never', 'Never')}`,
    ]);
    const template = (job.spec as { template: Pod }).template;
    const skip = structuredClone(cronJob);
    (skip.spec.jobTemplate.spec as { template: Pod }).template = {
      ...template,
      metadata: { annotations: { 'osm-healthcheck/run-to-completion': 'skip' } },
    };
    expect((await admit(review(skip, 'cron-2'))).response).toEqual({ uid: 'cron-2', allowed: true });
    const invalid = structuredClone(skip);
    (invalid.spec.jobTemplate.spec as { template: { metadata: Pod } }).template.metadata = {
      annotations: { 'osm-healthcheck/run-to-completion': 'always' },
    };
    expect((await admit(review(invalid, 'cron-3'))).response.warnings).toEqual([
      'osm-healthcheck: probes not rewritten: CronJob/nightly: spec.jobTemplate.spec.template.metadata.annotations.osm-healthcheck/run-to-completion: must be one of native-sidecar, skip, got "always"',
    ]);
  });
});

describe("kubectl's default container: the patch adds it whether or not the pod has annotations", () => {
  const { request } = JSON.parse(fixture('http-get')) as Review;
  const base = request.object;
  const metadata = base.metadata as Pod;
  const KEY = 'kubectl.kubernetes.io/default-container';
  // What inject writes for this pod: the webhook's record is the same, byte for byte.
  const RECORD = String(
    (injected(base).pod.metadata as { annotations: Record<string, string> }).annotations[RECORD_ANNOTATION],
  );
  it.each([
    {
      uid: 'dc-no-annotations',
      name: 'no metadata.annotations: the annotations map is added whole',
      pod: base,
      ops: [
        { op: 'add', path: '/metadata/annotations', value: { [KEY]: 'web', [RECORD_ANNOTATION]: RECORD } },
      ],
      annotations: { [KEY]: 'web', [RECORD_ANNOTATION]: RECORD },
    },
    {
      uid: 'dc-empty-annotations',
      name: 'empty metadata.annotations: the key is added',
      pod: { ...base, metadata: { ...metadata, annotations: {} } },
      ops: [
        { op: 'add', path: '/metadata/annotations/kubectl.kubernetes.io~1default-container', value: 'web' },
        { op: 'add', path: '/metadata/annotations/osm-healthcheck~1status', value: RECORD },
      ],
      annotations: { [KEY]: 'web', [RECORD_ANNOTATION]: RECORD },
    },
    {
      uid: 'dc-other-annotations',
      name: 'other annotations: the key is added beside them',
      pod: { ...base, metadata: { ...metadata, annotations: { 'prometheus.io/scrape': 'true' } } },
      ops: [
        { op: 'add', path: '/metadata/annotations/kubectl.kubernetes.io~1default-container', value: 'web' },
        { op: 'add', path: '/metadata/annotations/osm-healthcheck~1status', value: RECORD },
      ],
      annotations: { 'prometheus.io/scrape': 'true', [KEY]: 'web', [RECORD_ANNOTATION]: RECORD },
    },
    {
      uid: 'dc-own-value',
      name: "the pod's own value: kept, only the record is added",
      pod: { ...base, metadata: { ...metadata, annotations: { [KEY]: 'osm-healthcheck' } } },
      ops: [{ op: 'add', path: '/metadata/annotations/osm-healthcheck~1status', value: RECORD }],
      annotations: { [KEY]: 'osm-healthcheck', [RECORD_ANNOTATION]: RECORD },
    },
  ])('$name', async ({ uid, pod, ops: expectedOps, annotations }) => {
    const { response } = await admit(reviewOf(pod, uid));
    const ops = operations(response);
    const onMetadata = ops.filter((o) => o.path.startsWith('/metadata'));
    expect(onMetadata).toEqual(expectedOps);
    // Applied as the API server applies it: every operation's parent must exist.
    const after = patched(pod, response);
    expect((after.metadata as Pod).annotations).toEqual(annotations);
    expect(after).toEqual(injected(pod).pod);
  });

  it('the operation a patch must not carry: adding the key where annotations is missing fails to apply', () => {
    const naive = [
      { op: 'add', path: '/metadata/annotations/kubectl.kubernetes.io~1default-container', value: 'web' },
    ] as Operation[];
    expect(() => jsonpatch.applyPatch(structuredClone(base), naive, true, false)).toThrow(
      /OPERATION_PATH_CANNOT_ADD|Cannot perform an `add` operation/,
    );
  });
});

it("an already-injected pod (inject's own output, as the API server resends it on reinvocation): no patch", async () => {
  const { request } = JSON.parse(fixture('http-get')) as Review;
  const pod = injected(request.object).pod;
  const { response } = await admit(reviewOf(pod, 'already-injected'));
  expect(response).toEqual({ uid: 'already-injected', allowed: true });
  expect(await harness.logLine((l) => l.uid === 'already-injected')).toMatchObject({
    result: 'unchanged',
    changed: 'nothing to change',
  });
});

describe('requests the webhook leaves alone: allowed, no patch', () => {
  it.each([
    {
      name: 'non-pod',
      changed: 'Deployment: warnings only, its pods are patched as they are created',
      result: 'unchanged',
      warning: undefined,
    },
    { name: 'update', changed: 'operation UPDATE', result: 'skipped', warning: undefined },
    {
      name: 'invalid-pod',
      changed:
        'probes not rewritten: Pod/dup-5e6f-*: spec.containers[1].name: duplicate container name "web" (also containers[0])',
      result: 'failed',
      warning:
        'osm-healthcheck: probes not rewritten: Pod/dup-5e6f-*: spec.containers[1].name: duplicate container name "web" (also containers[0])',
    },
  ])('$name', async ({ name, changed, result, warning }) => {
    const body = fixture(name);
    const { request } = JSON.parse(body) as Review;
    const { response } = await admit(body);
    expect(response).toEqual({
      uid: request.uid,
      allowed: true,
      ...(warning === undefined ? {} : { warnings: [warning] }),
    });
    expect(await harness.logLine((l) => l.uid === request.uid)).toMatchObject({ result, changed });
  });
});

describe('requests that are no v1 AdmissionReview: 400 with the reason', () => {
  const review = JSON.parse(fixture('no-probes')) as Review;
  it.each([
    {
      name: 'malformed JSON',
      body: fixture('malformed'),
      status: 400,
      reason: /^bad request: body is not valid JSON: /,
    },
    {
      name: 'v1beta1',
      body: fixture('v1beta1'),
      status: 400,
      reason:
        /^bad request: apiVersion must be "admission.k8s.io\/v1" \(admissionReviewVersions: \[v1\]\), got "admission.k8s.io\/v1beta1"$/,
    },
    {
      name: 'no request',
      body: fixture('no-request'),
      status: 400,
      reason: /^bad request: request must be an object, got nothing$/,
    },
    {
      name: 'another kind',
      body: { ...review, kind: 'TokenReview' },
      status: 400,
      reason: /kind must be "AdmissionReview", got "TokenReview"/,
    },
    {
      name: 'no uid',
      body: { ...review, request: { ...review.request, uid: '' } },
      status: 400,
      reason: /request.uid must be a non-empty string, got ""/,
    },
    {
      name: 'a Pod CREATE without the pod',
      body: { ...review, request: { ...review.request, object: null } },
      status: 400,
      reason: /request.object must be the Pod being created, got null/,
    },
    {
      name: 'a JSON array',
      body: '[]',
      status: 400,
      reason: /body must be an AdmissionReview object, got an array/,
    },
    {
      name: 'an empty body',
      body: '',
      status: 400,
      reason: /^bad request: body is not valid JSON: Unexpected end of JSON input$/,
    },
  ])('$name', async ({ body, status, reason }) => {
    const answer = await harness.post(body);
    expect(answer.status).toBe(status);
    expect(answer.contentType).toMatch(/^text\/plain/);
    expect(answer.body.trim()).toMatch(reason);
  });

  it('a body that is not JSON by its content type: 415', async () => {
    const answer = await harness.post(fixture('no-probes'), '/mutate', 'text/plain');
    expect(answer.status).toBe(415);
  });
});

/** A pod whose JSON is about `bytes` long: one container with probes and a big environment. */
function bigPod(bytes: number): Pod {
  const value = 'x'.repeat(16 * 1024);
  const count = Math.ceil(bytes / value.length);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'big-', namespace: 'shop' },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: Array.from({ length: count }, (_, i) => ({ name: `BLOB_${i}`, value })),
          livenessProbe: { httpGet: { path: '/live', port: 8080 } },
          readinessProbe: { tcpSocket: { port: 8080 } },
        },
      ],
    },
  };
}

function reviewOf(pod: Pod, uid: string): unknown {
  const base = JSON.parse(fixture('no-probes')) as Review;
  return { ...base, request: { ...base.request, uid, object: pod } };
}

describe('big pods, reinvocation, concurrency', () => {
  it('a 1 MiB pod is rewritten like any other', async () => {
    const pod = bigPod(1024 * 1024);
    expect(JSON.stringify(pod).length).toBeGreaterThan(1024 * 1024);
    const { response } = await admit(reviewOf(pod, 'big-1'));
    expect(patched(pod, response)).toEqual(injected(pod).pod);
  });

  it('a body over the 4 MiB limit: 413', async () => {
    const answer = await harness.post(reviewOf(bigPod(5 * 1024 * 1024), 'too-big'));
    expect(answer.status).toBe(413);
  });

  it('reinvocation: a container another webhook added after us gets its probes rewritten', async () => {
    const { request } = JSON.parse(fixture('http-get')) as Review;
    const first = patched(request.object, (await admit(fixture('http-get'))).response);
    // What a mesh injector running after us does: append its proxy, with a probe of its own.
    const spec = first.spec as { containers: Pod[] };
    spec.containers.push({ name: 'proxy', image: 'proxy:1', readinessProbe: { tcpSocket: { port: 15000 } } });
    const { response } = await admit(reviewOf(first, 'reinvoked'));
    const second = patched(first, response);
    expect(second).toEqual(injected(first).pod);
    const containers = (second.spec as { containers: Pod[] }).containers;
    expect(containers.map((c) => c.name)).toEqual(['osm-healthcheck', 'web', 'proxy']);
    const env = containers[0]?.env as { name: string; value: string }[] | undefined;
    expect(Object.keys(JSON.parse(env?.[0]?.value ?? '{}').readiness)).toEqual(['web', 'proxy']);
  });

  it("reinvocation after osm-edge's injector (its webhook is called after ours): the pod becomes osm-edge's alone, then no patch", async () => {
    const { request } = JSON.parse(fixture('multiple-containers')) as Review;
    const ours = patched(request.object, (await admit(fixture('multiple-containers'))).response);
    const wrapped = { ...ours, spec: osmEdgeInject(ours.spec as PodSpec) };
    const { response } = await admit(reviewOf(wrapped, 'after-osm-edge'));
    const again = patched(wrapped, response);
    expect(again).toEqual(injected(wrapped).pod);
    expect(response.warnings?.[0]).toMatch(/osm-edge \(or OSM\) injected this pod after us/);
    // What osm-edge alone makes of the original pod, its healthcheck container running our image (an explicit
    // `scheme: HTTP`, the default, is not in our table: compared without it).
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(',"scheme":"HTTP"', ''));
    expect(plain(again.spec)).toEqual(plain(osmEdgeInject(request.object.spec as PodSpec, REWRITE.image)));
    const third = await admit(reviewOf(again, 'after-osm-edge-2'));
    expect(third.response.patch).toBeUndefined();
  });

  it('100 admissions at once are each answered for their own pod', async () => {
    const pods = Array.from({ length: 100 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: `p${i}-`, namespace: 'shop' },
      spec: { containers: [{ name: 'app', image: 'a:1', livenessProbe: { tcpSocket: { port: 1000 + i } } }] },
    }));
    const reviews = await Promise.all(pods.map((pod, i) => admit(reviewOf(pod, `concurrent-${i}`))));
    reviews.forEach(({ response }, i) => {
      expect(response.uid).toBe(`concurrent-${i}`);
      expect(patched(pods[i] as Pod, response)).toEqual(injected(pods[i] as Pod).pod);
    });
  });
});

describe('health endpoints', () => {
  it.each(['/healthz', '/readyz'])('%s answers 200 while serving', async (path) => {
    expect(await harness.get(path)).toMatchObject({ status: 200, body: 'ok\n' });
  });

  it('/readyz answers 503 when not ready, /healthz still 200', async () => {
    const cert = makeTestCert();
    const app = buildWebhookApp({
      tls: cert,
      image: REWRITE.image,
      placement: 'auto',
      cluster: () => ({ state: 'unknown', why: 'not asked' }),
      podSecurity: () => ({ state: 'unchecked' }),
      namespaceRules: () => ({ state: 'unchecked' }),
      kubelets: () => ({ state: 'unchecked' }),
      log: createLogger('silent'),
      notReady: () => 'starting',
      draining: () => false,
    });
    try {
      expect(await app.inject({ url: '/readyz' })).toMatchObject({
        statusCode: 503,
        body: 'not ready: starting\n',
      });
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      cert.cleanup();
    }
  });
});
