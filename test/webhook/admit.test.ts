// admit, the pure decision behind POST /mutate: what it skips, and that its own failure still admits the pod.

import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/rewrite/manifest-error.js';
import { admit } from '../../src/webhook/admit.js';
import type { AdmissionRequest } from '../../src/webhook/review.js';
import { REWRITE } from './harness.js';

const POD_KIND = { group: '', version: 'v1', kind: 'Pod' };

function request(object: unknown, more: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return { uid: 'u-1', kind: POD_KIND, operation: 'CREATE', namespace: 'ns', object, ...more };
}

const probed = {
  metadata: { name: 'web' },
  spec: { containers: [{ name: 'app', livenessProbe: { tcpSocket: { port: 8080 } } }] },
};

describe('admit', () => {
  it.each([
    {
      name: 'a subresource (pods/ephemeralcontainers)',
      req: request(probed, { subResource: 'ephemeralcontainers' }),
      changed: 'subresource ephemeralcontainers',
    },
    { name: 'a DELETE', req: request(probed, { operation: 'DELETE' }), changed: 'operation DELETE' },
    {
      name: 'a Pod of another group',
      req: request(probed, { kind: { group: 'example.com', version: 'v1', kind: 'Pod' } }),
      changed: 'not a Pod: example.com/v1 Pod',
    },
    {
      name: 'the opt-out annotation, in any case and spacing',
      req: request({ ...probed, metadata: { annotations: { 'osm-healthcheck/rewrite-probes': ' False ' } } }),
      changed: 'opted out (osm-healthcheck/rewrite-probes: "false")',
    },
  ])('skips $name', ({ req, changed }) => {
    const { response, summary } = admit(req, REWRITE);
    expect(response).toEqual({ uid: 'u-1', allowed: true });
    expect(summary).toMatchObject({ result: 'skipped', changed, patchOperations: 0 });
  });

  it.each([
    {
      name: 'a Pod',
      object: {
        ...probed,
        metadata: { name: 'web', annotations: { 'osm-healthcheck/memory-limit': '0' } },
      },
      kind: POD_KIND,
      warning:
        'osm-healthcheck: probes not rewritten: Pod/web: metadata.annotations.osm-healthcheck/memory-limit: must be more than 0, got "0"',
    },
    {
      name: 'a Deployment',
      object: {
        metadata: { name: 'web' },
        spec: {
          template: {
            metadata: { annotations: { 'osm-healthcheck/cpu-request': 'lots' } },
            spec: probed.spec,
          },
        },
      },
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      warning:
        'osm-healthcheck: probes not rewritten: Deployment/web: spec.template.metadata.annotations.osm-healthcheck/cpu-request: ',
    },
    {
      name: 'a Pod, the opt-out annotation neither "true" nor "false"',
      object: {
        ...probed,
        metadata: { name: 'web', annotations: { 'osm-healthcheck/rewrite-probes': 'no' } },
      },
      kind: POD_KIND,
      warning:
        'osm-healthcheck: probes not rewritten: Pod/web: metadata.annotations.osm-healthcheck/rewrite-probes: must be "true" or "false", got "no"',
    },
  ])('a bad annotation on $name: the warning names it where it stands', ({ object, kind, warning }) => {
    const { response, summary } = admit(request(object, { kind }), REWRITE);
    expect(summary.result).toBe('failed');
    expect(response.warnings?.[0]?.startsWith(warning), response.warnings?.[0]).toBe(true);
  });

  it.each([
    {
      name: "a user's container named osm-healthcheck",
      spec: { containers: [...probed.spec.containers, { name: 'osm-healthcheck', image: 'mine:1' }] },
      words: 'spec.containers[1].name: "osm-healthcheck" is the name of a container inject adds',
    },
    {
      name: 'an app listening on 15902',
      spec: { containers: [{ ...probed.spec.containers[0], ports: [{ containerPort: 15902 }] }] },
      words: "spec.containers[0].ports[0].containerPort: 15902 is one of the companion's ports (15901-15904)",
    },
    {
      name: 'an app probed on 15901, no companion of ours',
      spec: { containers: [{ name: 'app', livenessProbe: { httpGet: { path: '/', port: 15901 } } }] },
      words: "spec.containers[0].livenessProbe.httpGet.port: 15901 is one of the companion's ports",
    },
  ])(
    "our names and ports are ours: $name leaves the pod untouched, with inject's words",
    ({ spec, words }) => {
      const { response, summary } = admit(request({ metadata: { name: 'web' }, spec }), REWRITE);
      expect(response.patch).toBeUndefined();
      expect(summary.result).toBe('failed');
      expect(response.warnings?.[0]).toContain(`osm-healthcheck: probes not rewritten: Pod/web: ${words}`);
    },
  );

  it('names what changed: the probes the companion now answers', () => {
    const { summary } = admit(request(probed), REWRITE);
    expect(summary.pod).toBe('web');
    expect(summary.result).toBe('patched');
    expect(summary.changed).toMatch(/^companion answers liveness\/app; \d+ patch operations$/);
  });

  it.each([
    {
      name: 'rules not known yet: untouched, with the warning',
      namespaceRules: { state: 'unknown', namespace: 'ns', why: 'not listed yet' } as const,
      warning:
        'osm-healthcheck: Pod/web: left untouched: the LimitRanges and ResourceQuotas of namespace "ns" are not known (not listed yet), and they may refuse our containers',
    },
    {
      name: 'a quota with no room for ours: untouched, the quota named',
      namespaceRules: {
        state: 'known',
        namespace: 'ns',
        limitRanges: [],
        resourceQuotas: [
          { metadata: { name: 'q', namespace: 'ns' }, spec: { hard: { 'requests.cpu': '10m' } } },
        ],
      } as const,
      warning:
        'osm-healthcheck: Pod/web: left untouched: ResourceQuota "q" (namespace "ns") has requests.cpu 10m left, the pod needs 50m',
    },
  ])('namespace rules, $name', ({ namespaceRules, warning }) => {
    const { response, summary } = admit(request(probed), { ...REWRITE, namespaceRules });
    expect(response).toEqual({ uid: 'u-1', allowed: true, warnings: [warning] });
    expect(summary).toMatchObject({ result: 'unchanged', companion: 'untouched' });
  });

  it('a pod without a spec: admitted unchanged, the warning says why', () => {
    const { response, summary, error } = admit(request({ metadata: { generateName: 'w-' } }), REWRITE);
    expect(response).toEqual({
      uid: 'u-1',
      allowed: true,
      warnings: [
        'osm-healthcheck: probes not rewritten: Pod/w-*: spec: a pod needs a spec here, got nothing',
      ],
    });
    expect(summary).toMatchObject({ pod: 'w-*', result: 'failed' });
    expect(error).toBeInstanceOf(ManifestError);
  });

  it('an unexpected failure of ours (here: a value JSON cannot hold) still admits the pod', () => {
    const odd = {
      spec: { containers: [{ name: 'app', livenessProbe: { tcpSocket: { port: 1 } }, x: () => 1 }] },
    };
    const { response, summary, error } = admit(request(odd), REWRITE);
    expect(response.allowed).toBe(true);
    expect(response.patch).toBeUndefined();
    expect(response.warnings?.[0]).toMatch(/^osm-healthcheck: probes not rewritten: .*could not be cloned/);
    expect(summary.result).toBe('failed');
    expect(error).not.toBeInstanceOf(ManifestError);
  });
});
