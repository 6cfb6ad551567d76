// rewritePodSpec where the pod or its namespace limits what we may add: pods no mesh touches (hostNetwork,
// Windows) left as sent, and our containers fitted to the namespace's LimitRanges and ResourceQuotas, or the
// pod left untouched with a warning that names the rule, or an annotation refused at its name.

import { describe, expect, it } from 'vitest';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME } from '../../src/rewrite/companion.js';
import { AnnotationError } from '../../src/rewrite/manifest-error.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import { CPU_REQUEST_ANNOTATION } from '../../src/rewrite/resources/defaults.js';
import type { NamespaceRulesKnowledge } from '../../src/rewrite/resources/namespace-rules.js';
import type { Container, PodSpec, RewriteOptions, UntouchedCause } from '../../src/rewrite/types.js';

const OPTIONS: RewriteOptions = { image: DEFAULT_IMAGE, placement: 'first' };
const PROBED: Container = {
  name: 'app',
  image: 'shop:1',
  livenessProbe: { httpGet: { path: '/healthz', port: 8080 } },
};
const UNPROBED: Container = { name: 'app', image: 'shop:1' };

const rules = (limits: Record<string, unknown>[]): NamespaceRulesKnowledge => ({
  state: 'known',
  namespace: 'shop',
  limitRanges: [{ metadata: { name: 'lr', namespace: 'shop' }, spec: { limits } }],
  resourceQuotas: [],
});

function ours(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])].filter(
    (c) => c.name === COMPANION_NAME || c.name === INIT_NAME,
  );
}

describe('pods no mesh touches', () => {
  it.each<{ name: string; spec: Omit<PodSpec, 'containers'>; cause: UntouchedCause; warning: string }>([
    {
      name: 'hostNetwork: true',
      spec: { hostNetwork: true },
      cause: 'host-network',
      warning:
        "Pod/p: left untouched: spec.hostNetwork is true: our init container's iptables rules and the companion's ports 15901-15904 would be the node's, so no mesh touches such pods",
    },
    {
      name: 'spec.os.name: windows',
      spec: { os: { name: 'windows' } },
      cause: 'windows',
      warning:
        'Pod/p: left untouched: spec.os.name is windows: the companion and its init container are Linux containers, so no mesh touches such pods',
    },
  ])(
    '$name: left as sent, with a warning where the companion had probes to answer',
    ({ spec, cause, warning }) => {
      const probed = { ...spec, containers: [PROBED] };
      const result = rewritePodSpec(probed, undefined, OPTIONS, 'Pod/p');
      expect(result).toMatchObject({ spec: probed, changed: false, warnings: [warning] });
      expect(result.placement).toMatchObject({ companion: 'untouched', cause, warn: true });
      const quiet = rewritePodSpec({ ...spec, containers: [UNPROBED] }, undefined, OPTIONS, 'Pod/p');
      expect(quiet.warnings).toEqual([]);
    },
  );

  it('a Linux pod (spec.os.name: linux) and hostNetwork: false get the companion', () => {
    const spec = { hostNetwork: false, os: { name: 'linux' }, containers: [PROBED] };
    expect(ours(rewritePodSpec(spec, undefined, OPTIONS, 'Pod/p').spec).map((c) => c.name)).toEqual([
      INIT_NAME,
      COMPANION_NAME,
    ]);
  });
});

describe('our containers fitted to the namespace', () => {
  it('a LimitRange min: both containers declare it', () => {
    const options = { ...OPTIONS, namespaceRules: rules([{ type: 'Container', min: { cpu: '100m' } }]) };
    const { spec, warnings } = rewritePodSpec({ containers: [PROBED] }, undefined, options, 'Pod/p');
    expect(warnings).toEqual([]);
    for (const c of ours(spec)) {
      expect(c.resources).toEqual({ requests: { cpu: '100m', memory: '32Mi' }, limits: { memory: '320Mi' } });
    }
  });

  it('nothing fits: the pod as it came, the rule named in the warning and the placement', () => {
    const options = { ...OPTIONS, namespaceRules: rules([{ type: 'Container', max: { cpu: '20m' } }]) };
    const spec = { containers: [PROBED] };
    const result = rewritePodSpec(spec, undefined, options, 'Pod/p');
    const reason =
      'left untouched: LimitRange "lr" (namespace "shop"): maximum cpu usage per Container is 20m, but limit is 50m (container osm-healthcheck)';
    expect(result).toMatchObject({ spec, changed: false, warnings: [`Pod/p: ${reason}`] });
    expect(result.placement).toEqual({
      companion: 'untouched',
      cause: 'admission-rules',
      reason,
      warn: true,
    });
  });

  it('rules not known yet: untouched, like an unknown Pod Security level', () => {
    const options: RewriteOptions = {
      ...OPTIONS,
      namespaceRules: { state: 'unknown', namespace: 'shop', why: 'LimitRanges not listed yet' },
    };
    expect(rewritePodSpec({ containers: [PROBED] }, undefined, options, 'Pod/p').warnings).toEqual([
      'Pod/p: left untouched: the LimitRanges and ResourceQuotas of namespace "shop" are not known (LimitRanges not listed yet), and they may refuse our containers',
    ]);
  });

  it('an annotation that cannot fit: an AnnotationError naming it', () => {
    const options = { ...OPTIONS, namespaceRules: rules([{ type: 'Container', min: { cpu: '100m' } }]) };
    const call = () =>
      rewritePodSpec({ containers: [PROBED] }, { [CPU_REQUEST_ANNOTATION]: '10m' }, options, 'Pod/p');
    expect(call).toThrow(AnnotationError);
    expect(call).toThrow(
      `Pod/p: metadata.annotations.${CPU_REQUEST_ANNOTATION}: 10m cannot fit: LimitRange "lr" (namespace "shop"): minimum cpu usage per Container is 100m, but request is 10m`,
    );
  });

  it('--companion-cpu-limit: a CPU limit on both containers', () => {
    const options = { ...OPTIONS, companionCpuLimit: '200m' };
    for (const c of ours(rewritePodSpec({ containers: [PROBED] }, undefined, options, 'Pod/p').spec)) {
      expect(c.resources).toEqual({
        requests: { cpu: '50m', memory: '32Mi' },
        limits: { cpu: '200m', memory: '320Mi' },
      });
    }
  });
});
