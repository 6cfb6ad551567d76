// The companion's resources from the pod's annotations: each default overridable, written as the API server
// stores it, and never a pod the API server refuses (a memory request above its limit).

import { describe, expect, it } from 'vitest';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME } from '../../src/rewrite/companion.js';
import { ManifestError } from '../../src/rewrite/manifest-error.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import {
  COMPANION_RESOURCES,
  CPU_REQUEST_ANNOTATION as CPU,
  decideResources,
  MEMORY_LIMIT_ANNOTATION as LIMIT,
  MEMORY_REQUEST_ANNOTATION as REQUEST,
} from '../../src/rewrite/resources/defaults.js';
import type { Container, PodSpec, RewriteOptions } from '../../src/rewrite/types.js';
import { apiServerRefusals } from '../helpers/api-server.js';

const resources = (cpu: string, memory: string, limit: string) => ({
  requests: { cpu, memory },
  limits: { memory: limit },
});

describe('decideResources', () => {
  it.each<[string, Record<string, string> | undefined, ReturnType<typeof resources>]>([
    ['no annotations: the defaults', undefined, resources('50m', '32Mi', '320Mi')],
    [
      'other annotations only',
      { 'osm-healthcheck/run-to-completion': 'skip' },
      resources('50m', '32Mi', '320Mi'),
    ],
    ['cpu, canonical', { [CPU]: '0.1' }, resources('100m', '32Mi', '320Mi')],
    ['cpu, whole', { [CPU]: '1000m' }, resources('1', '32Mi', '320Mi')],
    ['cpu, exponent', { [CPU]: '1e-1' }, resources('100e-3', '32Mi', '320Mi')],
    ['cpu, spaces trimmed', { [CPU]: ' 20m ' }, resources('20m', '32Mi', '320Mi')],
    ['memory request', { [REQUEST]: '64Mi' }, resources('50m', '64Mi', '320Mi')],
    ['memory limit, canonical', { [LIMIT]: '1024Mi' }, resources('50m', '32Mi', '1Gi')],
    ['both memory values', { [REQUEST]: '48Mi', [LIMIT]: '0.5Gi' }, resources('50m', '48Mi', '512Mi')],
    ['request equal to limit', { [REQUEST]: '256M', [LIMIT]: '256M' }, resources('50m', '256M', '256M')],
    [
      'equal across formats',
      { [REQUEST]: '1Gi', [LIMIT]: '1073741824' },
      resources('50m', '1Gi', '1073741824'),
    ],
    // One side only, beyond the other's default: that default moves to meet it, as Kubernetes defaults a missing
    // request to the limit; refusing would deny the pod (webhook) for a value that is fine on its own.
    ['request above the default limit raises it', { [REQUEST]: '1Gi' }, resources('50m', '1Gi', '1Gi')],
    ['limit below the default request lowers it', { [LIMIT]: '16Mi' }, resources('50m', '16Mi', '16Mi')],
    ['zero requests', { [CPU]: '0', [REQUEST]: '0' }, resources('0', '0', '320Mi')],
    [
      'all three',
      { [CPU]: '250m', [REQUEST]: '100Mi', [LIMIT]: '200Mi' },
      resources('250m', '100Mi', '200Mi'),
    ],
  ])('%s', (_, annotations, expected) => {
    expect(decideResources(annotations)).toEqual({ resources: expected });
  });

  it.each<[Record<string, string>, string]>([
    [{ [CPU]: 'lots' }, `${CPU}: must be a Kubernetes quantity, e.g. 100m, 0.5, 64Mi, 1G or 1e3, got "lots"`],
    [{ [CPU]: '' }, `${CPU}: must be a Kubernetes quantity, e.g. 100m, 0.5, 64Mi, 1G or 1e3, got ""`],
    [
      { [REQUEST]: '64MB' },
      `${REQUEST}: must be a Kubernetes quantity, e.g. 100m, 0.5, 64Mi, 1G or 1e3, got "64MB"`,
    ],
    [{ [LIMIT]: '1e99' }, `${LIMIT}: is too large for a quantity, got "1e99"`],
    [{ [CPU]: '-50m' }, `${CPU}: must not be negative, got "-50m"`],
    [{ [LIMIT]: '0' }, `${LIMIT}: must be more than 0, got "0"`],
    [
      { [REQUEST]: '0.5Gi', [LIMIT]: '256Mi' },
      `${REQUEST}: must be less than or equal to the memory limit: 512Mi is above ${LIMIT} 256Mi`,
    ],
  ])('refuses %j', (annotations, invalid) => {
    const [annotation, problem] = invalid.split(/: (.*)/s);
    expect(decideResources(annotations)).toEqual({ invalid: { annotation, problem } });
  });

  it('the defaults are what COMPANION_RESOURCES says, already canonical', () => {
    expect(decideResources({})).toEqual({ resources: COMPANION_RESOURCES });
  });
});

const APP: Container = { name: 'app', image: 'app', livenessProbe: { httpGet: { path: '/', port: 8080 } } };
const OPTIONS: RewriteOptions = { image: DEFAULT_IMAGE, placement: 'first' };

function ours(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])].filter(
    (c) => c.name === COMPANION_NAME || c.name === INIT_NAME,
  );
}

describe('rewritePodSpec with resource annotations', () => {
  it.each<[string, Record<string, string>]>([
    ['none', {}],
    ['all three', { [CPU]: '0.1', [REQUEST]: '1024Mi', [LIMIT]: '2Gi' }],
    ['request only, above the default limit', { [REQUEST]: '400Mi' }],
    ['limit only, below the default request', { [LIMIT]: '16Mi' }],
  ])(
    '%s: companion and init container both take them, and the API server accepts the pod',
    (_, annotations) => {
      const { spec } = rewritePodSpec({ containers: [APP] }, annotations, OPTIONS, 'Deployment/web');
      const decided = decideResources(annotations);
      if ('invalid' in decided) throw new Error(decided.invalid.problem);
      const containers = ours(spec);
      expect(containers.map((c) => c.name)).toEqual([INIT_NAME, COMPANION_NAME]);
      for (const c of containers) expect(c.resources).toEqual(decided.resources);
      expect(apiServerRefusals(spec, { major: 1, minor: 30 }, false)).toEqual([]);
    },
  );

  it('the API server stand-in does refuse a request above its limit (the pod refusing the request would make)', () => {
    const spec = {
      containers: [{ ...APP, resources: { requests: { memory: '512Mi' }, limits: { memory: '256Mi' } } }],
    };
    expect(apiServerRefusals(spec, { major: 1, minor: 30 }, false)).toEqual([
      'app.resources.requests.memory: Invalid value: "512Mi": must be less than or equal to memory limit of 256Mi',
    ]);
  });

  it('a bad value is a ManifestError naming the annotation and the value', () => {
    const call = () =>
      rewritePodSpec({ containers: [APP] }, { [REQUEST]: '2Gi', [LIMIT]: '1Gi' }, OPTIONS, 'Deployment/web');
    expect(call).toThrow(ManifestError);
    expect(call).toThrow(
      `Deployment/web: metadata.annotations.${REQUEST}: must be less than or equal to the memory limit: 2Gi is above ${LIMIT} 1Gi`,
    );
    expect(() => rewritePodSpec({ containers: [APP] }, { [CPU]: '1 core' }, OPTIONS, 'Pod/p')).toThrow(
      `Pod/p: metadata.annotations.${CPU}: must be a Kubernetes quantity, e.g. 100m, 0.5, 64Mi, 1G or 1e3, got "1 core"`,
    );
  });

  it('an opted-out pod is not read', () => {
    const annotations = { 'osm-healthcheck/rewrite-probes': 'false', [CPU]: 'lots' };
    expect(rewritePodSpec({ containers: [APP] }, annotations, OPTIONS, 'Pod/p').changed).toBe(false);
  });
});
