// fitResources: what our two containers declare so that a pod the API server admits is admitted with them, from
// the pod, its annotations and its namespace's LimitRanges and ResourceQuotas. The table first (each row
// a namespace rule or pod refused with yesterday's fixed resources), then what else the API server counts.

import { describe, expect, it } from 'vitest';
import type { ClusterKnowledge } from '../../src/rewrite/placement.js';
import {
  type ContainerResources,
  CPU_REQUEST_ANNOTATION as CPU,
  MEMORY_LIMIT_ANNOTATION as LIMIT,
} from '../../src/rewrite/resources/defaults.js';
import type {
  LimitRangeItem,
  NamespaceRulesKnowledge,
  ResourceList,
} from '../../src/rewrite/resources/namespace-rules.js';
import { type FitInputs, fitResources } from '../../src/rewrite/resources/resource-fit.js';
import type { Container, PodSpec } from '../../src/rewrite/types.js';

const limitRange = (name: string, ...limits: LimitRangeItem[]) => ({
  metadata: { name, namespace: 'shop' },
  spec: { limits },
});
const quota = (
  name: string,
  hard: ResourceList,
  used: ResourceList = {},
  spec: Record<string, unknown> = {},
) => ({
  metadata: { name, namespace: 'shop' },
  spec: { hard, ...spec },
  status: { hard, used },
});
const known = (
  limitRanges: ReturnType<typeof limitRange>[] = [],
  resourceQuotas: ReturnType<typeof quota>[] = [],
): NamespaceRulesKnowledge => ({ state: 'known', namespace: 'shop', limitRanges, resourceQuotas });
const version = (minor: number): ClusterKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  sidecarGate: false,
});

const app = (requests?: ResourceList, limits?: ResourceList, extra: Partial<Container> = {}): Container => ({
  name: 'app',
  image: 'shop:1',
  ...(requests || limits
    ? { resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } }
    : {}),
  ...extra,
});

const declared = (cpu: string, memory: string, limits: ContainerResources['limits']): ContainerResources => ({
  requests: { cpu, memory },
  limits,
});
const DEFAULTS = declared('50m', '32Mi', { memory: '320Mi' });

function fitted(overrides: Partial<FitInputs> & { spec?: PodSpec }) {
  return fitResources({
    spec: { containers: [app()] },
    annotations: undefined,
    companionCpuLimit: undefined,
    withInit: true,
    native: false,
    rules: { state: 'unchecked' },
    cluster: { state: 'unchecked' },
    ...overrides,
  });
}

const BOTH_LIMITED = app({ cpu: '100m', memory: '64Mi' }, { cpu: '500m', memory: '256Mi' });

describe("fitResources: the issue's table", () => {
  it.each<{
    name: string;
    inputs: Partial<FitInputs>;
    companion: ContainerResources;
    init?: ContainerResources;
  }>([
    {
      name: 'LimitRange min cpu 100m, memory 64Mi per container: our requests raised to it',
      inputs: {
        rules: known([limitRange('min', { type: 'Container', min: { cpu: '100m', memory: '64Mi' } })]),
      },
      companion: declared('100m', '64Mi', { memory: '320Mi' }),
    },
    {
      name: 'LimitRange max memory 128Mi per container: our limit lowered to it',
      inputs: { rules: known([limitRange('max', { type: 'Container', max: { memory: '128Mi' } })]) },
      companion: declared('50m', '32Mi', { memory: '128Mi' }),
    },
    {
      name: 'LimitRange maxLimitRequestRatio cpu 2, memory 2: a CPU limit of 2 x the request, memory down to 64Mi',
      inputs: {
        rules: known([
          limitRange('ratio', { type: 'Container', maxLimitRequestRatio: { cpu: '2', memory: '2' } }),
        ]),
        spec: { containers: [BOTH_LIMITED] },
      },
      companion: declared('50m', '32Mi', { cpu: '100m', memory: '64Mi' }),
    },
    {
      name: 'ResourceQuota on requests and limits of cpu and memory: every value declared, a one-core CPU limit',
      inputs: {
        rules: known(
          [],
          [
            quota('adm', {
              'requests.cpu': '2',
              'requests.memory': '2Gi',
              'limits.cpu': '4',
              'limits.memory': '4Gi',
            }),
          ],
        ),
        spec: { containers: [BOTH_LIMITED] },
      },
      companion: declared('50m', '32Mi', { cpu: '1', memory: '320Mi' }),
    },
    {
      name: "LimitRange with defaults only: LimitRanger's CPU limit lands on ours, nothing else changes",
      inputs: {
        rules: known([
          limitRange('defaults', {
            type: 'Container',
            default: { cpu: '500m', memory: '256Mi' },
            defaultRequest: { cpu: '100m', memory: '128Mi' },
          }),
        ]),
      },
      companion: DEFAULTS,
    },
    {
      name: "pod-level resources (requests cpu 100m, limit memory 256Mi) on 1.36: the companion shares the pod's CPU",
      inputs: {
        cluster: version(36),
        spec: {
          resources: { requests: { cpu: '100m' }, limits: { memory: '256Mi' } },
          containers: [app({ cpu: '100m' })],
        },
      },
      companion: declared('0', '32Mi', { memory: '256Mi' }),
      init: declared('50m', '32Mi', { memory: '256Mi' }),
    },
  ])('$name', ({ inputs, companion, init }) => {
    expect(fitted(inputs)).toEqual({ fit: 'declared', companion, init: init ?? companion });
  });

  it("ResourceQuota with room for the app's 100m only: untouched, the quota named", () => {
    const rules = known([], [quota('adm', { 'requests.cpu': '100m' })]);
    expect(fitted({ rules, spec: { containers: [app({ cpu: '100m' })] } })).toEqual({
      fit: 'untouched',
      reason:
        'left untouched: ResourceQuota "adm" (namespace "shop") has requests.cpu 100m left, the pod needs 150m',
    });
  });
});

describe('fitResources: beyond the table', () => {
  it.each<{
    name: string;
    inputs: Partial<FitInputs>;
    companion: ContainerResources;
    init?: ContainerResources;
  }>([
    { name: 'no rules given (inject as before): the defaults', inputs: {}, companion: DEFAULTS },
    {
      name: 'rules known, none in the namespace: the defaults',
      inputs: { rules: known() },
      companion: DEFAULTS,
    },
    {
      name: '--companion-cpu-limit: a CPU limit on both',
      inputs: { companionCpuLimit: '500m' },
      companion: declared('50m', '32Mi', { cpu: '500m', memory: '320Mi' }),
    },
    {
      name: 'memory ratio 1.5: the limit at its 64Mi floor, the request raised to the next Mi that keeps the ratio',
      inputs: {
        rules: known([limitRange('ratio', { type: 'Container', maxLimitRequestRatio: { memory: '1.5' } })]),
      },
      companion: declared('50m', '43Mi', { memory: '64Mi' }),
    },
    {
      name: 'a default CPU limit below our request: we declare one that keeps our container valid',
      inputs: { rules: known([limitRange('tiny', { type: 'Container', default: { cpu: '20m' } })]) },
      companion: declared('50m', '32Mi', { cpu: '50m', memory: '320Mi' }),
    },
    {
      name: "max cpu per container: LimitRanger's default (the max) lands, nothing declared",
      inputs: { rules: known([limitRange('max', { type: 'Container', max: { cpu: '1' } })]) },
      companion: DEFAULTS,
    },
    {
      name: 'quota on limits.memory: the companion takes what is left, the init container (run before) its own',
      inputs: {
        rules: known([], [quota('mem', { 'limits.memory': '512Mi' })]),
        spec: { containers: [app(undefined, { memory: '256Mi' })] },
      },
      companion: declared('50m', '32Mi', { memory: '256Mi' }),
      init: DEFAULTS,
    },
    {
      name: 'quota on limits.cpu with 800m left: the companion takes what the app leaves, the init container all of it',
      inputs: {
        rules: known([], [quota('cpu', { 'limits.cpu': '2' }, { 'limits.cpu': '1200m' })]),
        spec: { containers: [app({ cpu: '100m' }, { cpu: '500m' })] },
      },
      companion: declared('50m', '32Mi', { cpu: '300m', memory: '320Mi' }),
      init: declared('50m', '32Mi', { cpu: '800m', memory: '320Mi' }),
    },
    {
      name: 'a quota scoped to Terminating pods does not count for a pod without activeDeadlineSeconds',
      inputs: {
        rules: known([], [quota('jobs', { 'requests.cpu': '10m' }, {}, { scopes: ['Terminating'] })]),
      },
      companion: DEFAULTS,
    },
    {
      name: 'pod-level budget, native companion: an init container of the app counts the companion started before it',
      inputs: {
        native: true,
        cluster: version(34),
        spec: {
          resources: { requests: { cpu: '300m' } },
          initContainers: [{ name: 'migrate', image: 'm', resources: { requests: { cpu: '280m' } } }],
          containers: [app({ cpu: '100m' })],
        },
      },
      companion: declared('20m', '32Mi', { memory: '320Mi' }),
      init: DEFAULTS,
    },
    {
      name: 'without the init container (a mesh annotation excludes our ports): the companion alone',
      inputs: { withInit: false },
      companion: DEFAULTS,
      init: undefined,
    },
    {
      name: 'a quota scoped to a PriorityClass the pod has: what it has left counts',
      inputs: {
        rules: known(
          [],
          [
            quota(
              'high',
              { 'limits.memory': '1Gi' },
              { 'limits.memory': '600Mi' },
              {
                scopeSelector: {
                  matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
                },
              },
            ),
          ],
        ),
        spec: { priorityClassName: 'high', containers: [app(undefined, { memory: '128Mi' })] },
      },
      companion: declared('50m', '32Mi', { memory: '296Mi' }),
      init: DEFAULTS,
    },
    {
      name: 'pod-level budget on 1.33 (feature alpha, may be off): fitted for both',
      inputs: {
        cluster: version(33),
        spec: { resources: { limits: { memory: '128Mi' } }, containers: [app()] },
      },
      companion: declared('50m', '32Mi', { memory: '128Mi' }),
    },
  ])('$name', (row) => {
    const init = 'init' in row ? row.init : row.companion;
    expect(fitted(row.inputs)).toEqual({
      fit: 'declared',
      companion: row.companion,
      ...(init === undefined ? {} : { init }),
    });
  });

  it.each<{ name: string; inputs: Partial<FitInputs>; reason: string }>([
    {
      name: 'rules not known (webhook before its list): untouched',
      inputs: { rules: { state: 'unknown', namespace: 'shop', why: 'not listed yet' } },
      reason:
        'left untouched: the LimitRanges and ResourceQuotas of namespace "shop" are not known (not listed yet), and they may refuse our containers',
    },
    {
      name: "LimitRange of type Pod: the pod's requests with ours above its max",
      inputs: {
        cluster: version(36),
        rules: known([limitRange('pods', { type: 'Pod', max: { cpu: '1' } })]),
        spec: { containers: [app({ cpu: '980m' }, { cpu: '1' })] },
      },
      reason:
        'left untouched: LimitRange "pods" (namespace "shop"): maximum cpu usage per Pod is 1, but request is 1030m',
    },
    {
      name: 'a NotBestEffort quota the BestEffort app escaped until our requests: the app would have to declare',
      inputs: {
        rules: known([], [quota('burstable', { 'requests.cpu': '4' }, {}, { scopes: ['NotBestEffort'] })]),
      },
      reason:
        'left untouched: ResourceQuota "burstable" (namespace "shop") makes every container declare requests.cpu, which container app does not',
    },
    {
      name: 'pod-level budget with no room left and a LimitRange min we must meet',
      inputs: {
        cluster: version(36),
        rules: known([limitRange('min', { type: 'Container', min: { memory: '32Mi' } })]),
        spec: { resources: { requests: { memory: '48Mi' } }, containers: [app({ memory: '32Mi' })] },
      },
      reason:
        'left untouched: spec.resources.requests[memory]: Invalid value: "48Mi": must be greater than or equal to aggregate container requests of 64Mi',
    },
    {
      name: 'a native sidecar of the app counts with the containers in a quota',
      inputs: {
        rules: known([], [quota('cpu', { 'requests.cpu': '320m' })]),
        spec: {
          initContainers: [
            { name: 'proxy', image: 'p', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
          ],
          containers: [app({ cpu: '100m' })],
        },
      },
      reason:
        'left untouched: ResourceQuota "cpu" (namespace "shop") has requests.cpu 320m left, the pod needs 350m',
    },
    {
      name: '--companion-cpu-limit above a LimitRange max',
      inputs: {
        companionCpuLimit: '2',
        rules: known([limitRange('max', { type: 'Container', max: { cpu: '1' } })]),
      },
      reason:
        'left untouched: LimitRange "max" (namespace "shop"): maximum cpu usage per Container is 1, but limit is 2 (container osm-healthcheck); our CPU limit is --companion-cpu-limit 2',
    },
  ])('$name', ({ inputs, reason }) => {
    expect(fitted(inputs)).toEqual({ fit: 'untouched', reason });
  });

  it.each<{
    name: string;
    annotations: Record<string, string>;
    rules: NamespaceRulesKnowledge;
    annotation: string;
    problem: string;
  }>([
    {
      name: 'a CPU request annotation below a LimitRange min',
      annotations: { [CPU]: '20m' },
      rules: known([limitRange('min', { type: 'Container', min: { cpu: '100m' } })]),
      annotation: CPU,
      problem:
        '20m cannot fit: LimitRange "min" (namespace "shop"): minimum cpu usage per Container is 100m, but request is 20m (container osm-healthcheck)',
    },
    {
      name: 'a memory limit annotation above a LimitRange max',
      annotations: { [LIMIT]: '512Mi' },
      rules: known([limitRange('max', { type: 'Container', max: { memory: '128Mi' } })]),
      annotation: LIMIT,
      problem:
        '512Mi cannot fit: LimitRange "max" (namespace "shop"): maximum memory usage per Container is 128Mi, but limit is 512Mi (container osm-healthcheck)',
    },
    {
      name: 'a memory limit annotation below a LimitRange min (our request, raised to it, is refused too)',
      annotations: { [LIMIT]: '48Mi' },
      rules: known([limitRange('min', { type: 'Container', min: { memory: '64Mi' } })]),
      annotation: LIMIT,
      problem:
        '48Mi cannot fit: LimitRange "min" (namespace "shop"): minimum memory usage per Container is 64Mi, but limit is 48Mi (container osm-healthcheck)',
    },
  ])('$name: refused at the annotation', ({ annotations, rules, annotation, problem }) => {
    expect(fitted({ annotations, rules })).toEqual({ fit: 'invalid', invalid: { annotation, problem } });
  });
});

describe('fitResources: the rules of the version that judges the pod', () => {
  // A web app that declares requests and limits of both, under a LimitRange of type Pod bounding the pod's CPU.
  const podMax = known([limitRange('pods', { type: 'Pod', max: { cpu: '400m' } })]);
  const cpuLimitOf = (fit: ReturnType<typeof fitted>) =>
    fit.fit === 'declared' ? fit.companion.limits.cpu : `not declared: ${JSON.stringify(fit)}`;

  it.each([
    // 1.26 adds the containers' limits up only where every container declares one: ours must, within what is left.
    {
      name: '1.26: the companion declares a CPU limit: what the Pod max leaves',
      cluster: version(26),
      cpu: '100m',
    },
    // 1.27+ adds up what is there: the companion without a CPU limit changes nothing.
    { name: '1.27: no CPU limit needed', cluster: version(27), cpu: undefined },
    { name: '1.36: no CPU limit needed', cluster: version(36), cpu: undefined },
    // Unknown: it must hold on 1.26 too.
    {
      name: 'version unknown (inject without --kube-version)',
      cluster: { state: 'unchecked' as const },
      cpu: '100m',
    },
    {
      name: 'version not learnt yet (webhook)',
      cluster: { state: 'unknown' as const, why: 'no answer' },
      cpu: '100m',
    },
  ])('$name', ({ cluster, cpu }) => {
    const app300 = app({ cpu: '100m', memory: '64Mi' }, { cpu: '300m', memory: '256Mi' });
    const fit = fitted({ cluster, rules: podMax, spec: { containers: [app300] } });
    expect(cpuLimitOf(fit)).toBe(cpu);
  });

  it('1.26, an app container without a CPU limit: the Pod max is not ours to meet, no limit declared', () => {
    const noLimit = app({ cpu: '100m', memory: '64Mi' }, { memory: '256Mi' });
    const init = { name: 'setup', image: 'i', resources: { limits: { cpu: '100m' } } };
    // The pod's CPU limit there is its init container's (admission.go: the larger of the sum and each init container).
    const fit = fitted({
      cluster: version(26),
      rules: podMax,
      spec: { initContainers: [init], containers: [noLimit] },
    });
    expect(cpuLimitOf(fit)).toBeUndefined();
  });

  it('1.26, no room left under the Pod max for our CPU limit: untouched, naming the rule', () => {
    const full = app({ cpu: '100m', memory: '64Mi' }, { cpu: '400m', memory: '256Mi' });
    expect(fitted({ cluster: version(26), rules: podMax, spec: { containers: [full] } })).toEqual({
      fit: 'untouched',
      reason:
        'left untouched: LimitRange "pods" (namespace "shop"): maximum cpu usage per Pod is 400m, but limit is 450m',
    });
    // 1.36 admits the same pod with the companion as it comes.
    expect(cpuLimitOf(fitted({ cluster: version(36), rules: podMax, spec: { containers: [full] } }))).toBe(
      undefined,
    );
  });
});
