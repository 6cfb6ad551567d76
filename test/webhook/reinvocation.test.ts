// Reinvocation (reinvocationPolicy: IfNeeded): the API server calls the webhook again after defaulting and the
// in-tree plugins changed what it returned (test/helpers/api-server-admission.ts). The second call must find its
// own output in sync and return no patch, for every fixture shape and placement; a real change between the calls
// (a new image, another app probe, an edited companion) is still patched, field by field, keeping the rest.

import { readFileSync } from 'node:fs';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { injectManifests } from '../../src/manifest/inject.js';
import { COMPANION_NAME, INIT_NAME } from '../../src/rewrite/companion.js';
import type { LimitRangeItem } from '../../src/rewrite/resources/namespace-rules.js';
import type { RewriteOptions } from '../../src/rewrite/types.js';
import { admit } from '../../src/webhook/admit.js';
import type { AdmissionRequest, AdmissionResponse } from '../../src/webhook/review.js';
import { type Admission, betweenCalls, TOKEN_MOUNT_PATH } from '../helpers/api-server-admission.js';
import { REWRITE } from './harness.js';

type Pod = Record<string, unknown>;
type Container = Record<string, unknown> & { name: string };

const fixture = (name: string): AdmissionRequest =>
  JSON.parse(readFileSync(new URL(`../fixtures/webhook/${name}.json`, import.meta.url), 'utf8')).request;

const operations = (response: AdmissionResponse): Operation[] =>
  response.patch === undefined ? [] : JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));

function patched(pod: Pod, response: AdmissionResponse): Pod {
  return jsonpatch.applyPatch(structuredClone(pod), operations(response), true, false).newDocument;
}

function container(pod: Pod, name: string): Container | undefined {
  const spec = pod.spec as { containers: Container[]; initContainers?: Container[] };
  return [...(spec.initContainers ?? []), ...spec.containers].find((c) => c.name === name);
}

const NATIVE_1_30: RewriteOptions = {
  ...REWRITE,
  placement: 'native-sidecar',
  cluster: { state: 'known', version: { major: 1, minor: 30 }, sidecarGate: false },
};
/** The default placement where native sidecars are GA: a native sidecar without any flag. */
const AUTO_1_33: RewriteOptions = {
  ...REWRITE,
  cluster: { state: 'known', version: { major: 1, minor: 33 }, sidecarGate: false },
};
const KNOWN_1_26: RewriteOptions = {
  ...REWRITE,
  cluster: { state: 'known', version: { major: 1, minor: 26 }, sidecarGate: false },
};
/** A namespace with a LimitRange, on 1.33+ (resizePolicy defaulted): the most the API server adds. */
const BUSY: Admission = {
  limitRange: { default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '0.1', memory: '64Mi' } },
  inPlaceResize: true,
};

/** The namespace's LimitRange as the webhook knows it (rewrite/resources/resource-fit.ts), with what LimitRanger applies. */
const limitRangeRules = (limits: Omit<LimitRangeItem, 'type'>): RewriteOptions['namespaceRules'] => ({
  state: 'known',
  namespace: 'default',
  limitRanges: [
    { metadata: { name: 'lr', namespace: 'default' }, spec: { limits: [{ type: 'Container', ...limits }] } },
  ],
  resourceQuotas: [],
});
/** min, max and a ratio: our requests raised, a CPU limit of our own, LimitRanger's defaults on the app. */
const STRICT: Admission = {
  limitRange: { default: { memory: '1Gi' }, defaultRequest: { cpu: '100m', memory: '1Gi' } },
  inPlaceResize: true,
};
const FITTED = [
  {
    placement: 'a LimitRange with defaults, known',
    options: {
      ...REWRITE,
      namespaceRules: limitRangeRules({
        default: BUSY.limitRange?.default,
        defaultRequest: BUSY.limitRange?.defaultRequest,
      }),
    },
    admission: BUSY,
  },
  {
    placement: 'a LimitRange with min, max and maxLimitRequestRatio, known',
    options: {
      ...NATIVE_1_30,
      namespaceRules: limitRangeRules({
        min: { cpu: '100m', memory: '64Mi' },
        max: { memory: '1Gi' },
        maxLimitRequestRatio: { cpu: '4' },
      }),
    },
    admission: STRICT,
  },
];

/** The first call as the API server makes it, our patch applied, and the chain run again: the second call's pod. */
function twoCalls(name: string, options: RewriteOptions, admission: Admission = {}) {
  const request = fixture(name);
  const pod0 = betweenCalls(request.object as Pod, admission);
  const first = admit({ ...request, object: pod0 }, options);
  const pod1 = patched(pod0, first.response);
  const pod2 = betweenCalls(pod1, admission);
  const second = admit({ ...request, uid: `${request.uid}-again`, object: pod2 }, options);
  return { request, pod0, first, pod1, pod2, second };
}

const SHAPES = [
  'http-get',
  'annotated',
  'https-headers',
  'tcp-socket',
  'grpc',
  'warnings',
  'multiple-containers',
  'native-sidecar',
  'osm-edge-rewritten',
  'job-pod',
  'exec',
  'no-probes',
  'opt-out',
];
const CASES = SHAPES.flatMap((shape) =>
  [
    { options: REWRITE, placement: 'version unknown' },
    { options: NATIVE_1_30, placement: '--placement native-sidecar on 1.30' },
    { options: AUTO_1_33, placement: '--placement auto on 1.33' },
    { options: KNOWN_1_26, placement: 'on 1.26' },
  ].flatMap(({ options, placement }) => [
    { name: `${shape}, ${placement}`, shape, options, admission: {} },
    { name: `${shape}, ${placement}, LimitRange and resizePolicy`, shape, options, admission: BUSY },
  ]),
).concat(
  SHAPES.flatMap((shape) =>
    FITTED.map(({ placement, options, admission }) => ({
      name: `${shape}, ${placement}`,
      shape,
      options,
      admission,
    })),
  ),
);

describe('the second call finds its own output in sync: no patch', () => {
  it.each(CASES)('$name', ({ shape, options, admission }) => {
    const { first, pod1, pod2, second } = twoCalls(shape, options, admission);
    expect(second.response.patch, JSON.stringify(operations(second.response))).toBeUndefined();
    expect(second.response.patchType).toBeUndefined();
    expect(second.summary.patchOperations).toBe(0);
    expect(second.summary.result).toBe(first.summary.result === 'skipped' ? 'skipped' : 'unchanged');
    expect(second.response.warnings).toEqual(first.response.warnings);
    if (first.response.patch === undefined) return;
    // Not vacuous: between the calls the API server did change what we wrote.
    for (const name of [COMPANION_NAME, INIT_NAME]) {
      expect(container(pod1, name)?.volumeMounts, name).toBeUndefined();
      expect(container(pod2, name)?.volumeMounts, name).toEqual([
        expect.objectContaining({ mountPath: TOKEN_MOUNT_PATH, readOnly: true }),
      ]);
      expect(container(pod2, name)?.imagePullPolicy, name).toBe('IfNotPresent');
    }
    // The pod stays as the chain left it: a third call changes nothing either.
    const third = admit({ ...fixture(shape), object: betweenCalls(pod2, admission) }, options);
    expect(third.response.patch).toBeUndefined();
  });

  it.each(['http-get', 'multiple-containers', 'native-sidecar'])(
    'inject on %s as the API server keeps it (kubectl get -o yaml | inject) changes nothing',
    (shape) => {
      const { pod2 } = twoCalls(shape, REWRITE, BUSY);
      const yaml = stringify(pod2);
      expect(injectManifests(yaml, REWRITE, 'yaml').output).toBe(yaml);
      expect(JSON.parse(injectManifests(JSON.stringify(pod2), REWRITE, 'json').output)).toEqual(pod2);
    },
  );

  it('a hostNetwork pod: left as sent, with a warning, on either call (no mesh touches such pods)', () => {
    const request = fixture('http-get');
    const object = request.object as Pod;
    const pod0 = betweenCalls({ ...object, spec: { ...(object.spec as Pod), hostNetwork: true } });
    const { response } = admit({ ...request, object: pod0 }, REWRITE);
    expect(response.patch).toBeUndefined();
    expect(response.warnings?.join('\n')).toMatch(/left untouched: spec\.hostNetwork is true/);
    expect(admit({ ...request, object: betweenCalls(pod0) }, REWRITE).response.patch).toBeUndefined();
  });
});

describe('fitted to the namespace: the second call keeps what LimitRanger added to ours', () => {
  it("min, max and ratio: requests raised, our CPU limit, LimitRanger's memory defaults on the app only", () => {
    const [strict] = FITTED.slice(1);
    if (strict === undefined) throw new Error('no STRICT case');
    const { pod1, pod2, second } = twoCalls('http-get', strict.options, strict.admission);
    expect(container(pod1, COMPANION_NAME)?.resources).toEqual({
      requests: { cpu: '100m', memory: '64Mi' },
      limits: { cpu: '400m', memory: '320Mi' },
    });
    expect(container(pod2, 'web')?.resources).toMatchObject({ limits: { memory: '1Gi' } });
    expect(second.response.patch).toBeUndefined();
  });
});

describe('a real change between the calls is still patched, and only that', () => {
  it('a new image: both containers get it, nothing else changes', () => {
    const { request, pod2 } = twoCalls('http-get', REWRITE, BUSY);
    const second = admit({ ...request, object: pod2 }, { ...REWRITE, image: 'registry.example/osm-hc:9.9' });
    const ops = operations(second.response);
    expect(ops.map((op) => [op.op, op.path]).sort()).toEqual([
      ['replace', '/metadata/annotations/osm-healthcheck~1status'],
      ['replace', '/spec/containers/0/image'],
      ['replace', '/spec/initContainers/0/image'],
    ]);
    const record = ops.find((op) => op.path.endsWith('osm-healthcheck~1status'));
    expect(JSON.parse(String(record && 'value' in record ? record.value : ''))).toMatchObject({
      image: 'registry.example/osm-hc:9.9',
    });
  });

  it('a later webhook changed an app probe: it is rewritten and the table follows, additions kept', () => {
    const { request, pod2 } = twoCalls('http-get', REWRITE, BUSY);
    const changed = structuredClone(pod2);
    const web = container(changed, 'web') as Container;
    web.livenessProbe = { httpGet: { path: '/alive', port: 9090, scheme: 'HTTP' }, periodSeconds: 3 };
    const second = admit({ ...request, object: changed }, REWRITE);
    const ops = operations(second.response);
    expect(ops.some((op) => op.op === 'remove')).toBe(false);
    const after = patched(changed, second.response);
    expect((container(after, 'web') as Container).livenessProbe).toEqual({
      httpGet: { path: '/osm-liveness-probe/web', port: 15901, scheme: 'HTTP' },
      periodSeconds: 3,
    });
    const companion = container(after, COMPANION_NAME) as Container;
    const env = companion.env as { name: string; value?: string }[];
    const table = JSON.parse(env.find((e) => e.name === 'OSM_HEALTHCHECK_PROBES')?.value ?? '{}');
    expect(table.liveness.web).toEqual({
      httpGet: { path: '/alive', port: 9090, scheme: 'HTTP' },
      timeoutSeconds: 1,
    });
    expect(companion.volumeMounts).toEqual(container(pod2, COMPANION_NAME)?.volumeMounts);
    expect(companion.resources).toEqual(container(pod2, COMPANION_NAME)?.resources);
    // ...and once the chain ran over that, the next call is quiet again.
    expect(admit({ ...request, object: betweenCalls(after, BUSY) }, REWRITE).response.patch).toBeUndefined();
  });

  it('someone edited the companion: its own probe and env go back, one field each', () => {
    const { request, pod2 } = twoCalls('tcp-socket', REWRITE);
    const edited = structuredClone(pod2);
    const companion = container(edited, COMPANION_NAME) as Container;
    (companion.startupProbe as Pod).periodSeconds = 5;
    const grace = (companion.env as Pod[]).find((e) => e.name === 'OSM_HEALTHCHECK_SHUTDOWN_GRACE_SECONDS');
    if (grace !== undefined) grace.value = '99';
    const ops = operations(admit({ ...request, object: edited }, REWRITE).response);
    expect(ops).toEqual([
      expect.objectContaining({
        op: 'replace',
        path: expect.stringMatching(/\/env\/\d+\/value$/),
        value: '30',
      }),
      expect.objectContaining({
        op: 'replace',
        path: expect.stringMatching(/startupProbe\/periodSeconds$/),
        value: 1,
      }),
    ]);
  });
});

describe('resource annotations: written as the API server stores them, so the second call has nothing to patch', () => {
  const ANNOTATIONS = {
    'osm-healthcheck/cpu-request': '0.1',
    'osm-healthcheck/memory-request': '1024Mi',
    'osm-healthcheck/memory-limit': '2e9',
  };
  const annotated = (request: AdmissionRequest): AdmissionRequest => {
    const object = structuredClone(request.object) as Pod & { metadata: Pod };
    object.metadata.annotations = { ...(object.metadata.annotations as Pod | undefined), ...ANNOTATIONS };
    return { ...request, object };
  };

  it.each([
    { name: 'version unknown', options: REWRITE, admission: {} },
    { name: '--native-sidecar on 1.30, LimitRange and resizePolicy', options: NATIVE_1_30, admission: BUSY },
  ])('$name', ({ options, admission }) => {
    const request = annotated(fixture('http-get'));
    const pod0 = betweenCalls(request.object as Pod, admission);
    const first = admit({ ...request, object: pod0 }, options);
    const pod1 = patched(pod0, first.response);
    const wanted = { requests: { cpu: '100m', memory: '1Gi' }, limits: { memory: '2e9' } };
    for (const name of [COMPANION_NAME, INIT_NAME])
      expect(container(pod1, name)?.resources, name).toEqual(wanted);
    const pod2 = betweenCalls(pod1, admission);
    const second = admit({ ...request, uid: `${request.uid}-again`, object: pod2 }, options);
    expect(second.response.patch, JSON.stringify(operations(second.response))).toBeUndefined();
    expect(second.summary.result).toBe('unchanged');
  });

  it('not vacuous: the stand-in stores what it is given in canonical form, as the API server does', () => {
    const pod = betweenCalls({
      spec: { containers: [{ name: 'c', resources: { requests: { cpu: '0.1' } } }] },
    });
    expect(container(pod, 'c')?.resources).toEqual({ requests: { cpu: '100m' } });
  });

  it('an annotation changed between the calls is patched, and only that value', () => {
    const request = annotated(fixture('http-get'));
    const pod0 = betweenCalls(request.object as Pod);
    const pod1 = patched(pod0, admit({ ...request, object: pod0 }, REWRITE).response);
    const pod2 = betweenCalls(pod1) as Pod & { metadata: { annotations: Record<string, string> } };
    pod2.metadata.annotations['osm-healthcheck/cpu-request'] = '0.25';
    const second = admit({ ...request, object: pod2 }, REWRITE);
    const ops = operations(second.response);
    expect(ops.map((op) => [op.op, op.path, 'value' in op ? op.value : undefined]).sort()).toEqual([
      ['replace', '/spec/containers/0/resources/requests/cpu', '250m'],
      ['replace', '/spec/initContainers/0/resources/requests/cpu', '250m'],
    ]);
  });
});
