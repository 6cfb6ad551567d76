// What the companion and the init container declare in one pod, so that a pod the API server admits is still
// admitted with them: the defaults and the pod's annotations (resources.ts) fitted to the pod's own budget
// (`spec.resources`) and to its namespace's LimitRanges and ResourceQuotas, then checked against everything
// the API server checks (admission-rules.ts). Where nothing fits, the pod is left untouched with a warning that
// names the rule; a value an annotation pins that cannot fit is an error at that annotation.

import { admissionViolations, admittedShape, type NamespaceRules } from './admission-rules.js';
import { COMPANION_NAME, INIT_NAME } from './companion.js';
import { limitItems } from './limit-ranger.js';
import type { NamespaceRulesKnowledge, Violation } from './namespace-rules.js';
import type { ClusterKnowledge } from './placement.js';
import { aggregateParts, type Kind, POD_LEVEL_RESOURCES, type PodShape, shapeOf } from './pod-resources.js';
import { formatQuantity, parseQuantity, type Quantity } from './quantity.js';
import { quotaFacts, quotaMatches, USAGE_OF } from './quota.js';
import {
  CPU_REQUEST_ANNOTATION,
  decideResources,
  type InvalidAnnotation,
  MEMORY_LIMIT_ANNOTATION,
  MEMORY_REQUEST_ANNOTATION,
} from './resources.js';
import type { Container, PodSpec } from './types.js';

/** The `resources` of one of our containers; a CPU limit only where a rule or --companion-cpu-limit asks. */
export interface ContainerResources {
  requests: { cpu: string; memory: string };
  limits: { cpu?: string; memory: string };
}

export type ResourceFit =
  | { fit: 'declared'; companion: ContainerResources; init: ContainerResources }
  | { fit: 'untouched'; reason: string }
  | { fit: 'invalid'; invalid: InvalidAnnotation };

export interface FitInputs {
  /** The pod as it came; earlier copies of our two containers in it are set aside. */
  spec: PodSpec;
  annotations: Readonly<Record<string, string>> | undefined;
  /** --companion-cpu-limit, canonical: a CPU limit on both containers whatever the rules (policies we cannot read). */
  companionCpuLimit: string | undefined;
  withInit: boolean;
  /** The companion as a native sidecar (second among the init containers, after ours), else first container. */
  native: boolean;
  rules: NamespaceRulesKnowledge;
  /** Whether pod-level resources count (the PodLevelResources feature: on by default from 1.34). */
  cluster: ClusterKnowledge;
}

/**
 * Lowest memory limit we lower to where a rule asks for less: twice the 33 MiB of anonymous memory serve reached
 * under floods in the soak (BENCHMARKS.md, "Soak"); its working set idles near 22 MiB. The 320Mi default is for
 * the worst burst serve admits (1024 slow probes in flight), which such a limit gives up.
 */
export const MEMORY_LIMIT_FLOOR = '64Mi';
/**
 * The CPU limit we write where a rule demands one and sets no value: serve is one Node thread, so one core
 * throttles nothing but V8's helper threads.
 */
export const DEMANDED_CPU_LIMIT = '1';

const OURS = new Set([COMPANION_NAME, INIT_NAME]);

function quantity(text: string): Quantity {
  const parsed = parseQuantity(text);
  if ('invalid' in parsed) throw new Error(`${text}: ${parsed.invalid}`);
  return parsed;
}

/** Pure, table-tested (test/rewrite/resource-fit.test.ts). */
export function fitResources(inputs: FitInputs): ResourceFit {
  const decided = decideResources(inputs.annotations);
  if ('invalid' in decided) return { fit: 'invalid', invalid: decided.invalid };
  const { rules: knowledge } = inputs;
  if (knowledge.state === 'unknown') {
    return {
      fit: 'untouched',
      reason: `left untouched: the LimitRanges and ResourceQuotas of namespace "${knowledge.namespace}" are not known (${brief(knowledge.why)}), and they may refuse our containers`,
    };
  }
  const rules: NamespaceRules =
    knowledge.state === 'known' ? knowledge : { limitRanges: [], resourceQuotas: [] };
  const base = withoutOurs(inputs.spec);
  const worlds = podLevelWorlds(inputs.cluster, shapeOf(base));
  const wanted = {
    requests: { ...decided.resources.requests },
    limits: {
      ...(inputs.companionCpuLimit === undefined ? {} : { cpu: inputs.companionCpuLimit }),
      memory: decided.resources.limits.memory,
    },
  };
  const pinned = {
    'requests.cpu': inputs.annotations?.[CPU_REQUEST_ANNOTATION] !== undefined,
    'requests.memory': inputs.annotations?.[MEMORY_REQUEST_ANNOTATION] !== undefined,
    'limits.memory': inputs.annotations?.[MEMORY_LIMIT_ANNOTATION] !== undefined,
    'limits.cpu': inputs.companionCpuLimit !== undefined,
  };
  const fitted = (who: 'companion' | 'init') =>
    fitContainer({ who, wanted, pinned, base, rules, worlds, native: inputs.native });
  const companion = fitted('companion');
  const init = inputs.withInit ? fitted('init') : companion;
  const patched = withOurs(base, companion, inputs.withInit ? init : undefined, inputs.native);
  for (const podLevel of worlds) {
    const before = new Set(admissionViolations(base, rules, podLevel).map((v) => v.key));
    const ours = admissionViolations(patched, rules, podLevel).filter((v) => !before.has(v.key));
    const [first] = ours;
    if (first === undefined) continue;
    const annotation = pinnedAnnotation(first, pinned);
    if (annotation !== undefined) {
      const value = annotation.value(decided.resources);
      return {
        fit: 'invalid',
        invalid: { annotation: annotation.name, problem: `${value} cannot fit: ${first.message}` },
      };
    }
    return { fit: 'untouched', reason: `left untouched: ${first.message}` };
  }
  return { fit: 'declared', companion, init };
}

const ANNOTATIONS: Readonly<
  Record<
    string,
    {
      name: string;
      value: (r: { requests: { cpu: string; memory: string }; limits: { memory: string } }) => string;
    }
  >
> = {
  'requests.cpu': { name: CPU_REQUEST_ANNOTATION, value: (r) => r.requests.cpu },
  'requests.memory': { name: MEMORY_REQUEST_ANNOTATION, value: (r) => r.requests.memory },
  'limits.memory': { name: MEMORY_LIMIT_ANNOTATION, value: (r) => r.limits.memory },
};

/** The annotation behind a refused value of ours, where an annotation pinned it. */
function pinnedAnnotation(violation: Violation, pinned: Readonly<Record<string, boolean>>) {
  const { field, container } = violation;
  if (field === undefined || (container !== undefined && !OURS.has(container))) return undefined;
  return pinned[field] ? ANNOTATIONS[field] : undefined;
}

/**
 * Where `spec.resources` is set: counted (the feature on), not counted (off, or before 1.32: the API server
 * drops the field), or both where the version does not say (alpha, off by default, in 1.32 and 1.33).
 */
function podLevelWorlds(cluster: ClusterKnowledge, shape: PodShape): boolean[] {
  const set = POD_LEVEL_RESOURCES.some((n) => shape.pod?.requests.has(n) || shape.pod?.limits.has(n));
  if (!set) return [false];
  if (cluster.state !== 'known' || cluster.version.major !== 1) return [false, true];
  if (cluster.version.minor >= 34) return [true];
  return cluster.version.minor >= 32 ? [false, true] : [false];
}

function withoutOurs(spec: PodSpec): PodSpec {
  const notOurs = (list: Container[] | undefined) => list?.filter((c) => !OURS.has(String(c?.name ?? '')));
  const next: PodSpec = { ...spec, containers: notOurs(spec.containers) ?? [] };
  if (spec.initContainers !== undefined) next.initContainers = notOurs(spec.initContainers);
  return next;
}

/** Our containers where the rewrite puts them (pod.ts withCompanion), with nothing but their resources. */
export function withOurs(
  base: PodSpec,
  companion: ContainerResources,
  init: ContainerResources | undefined,
  native: boolean,
): PodSpec {
  const ours = { name: COMPANION_NAME, resources: companion };
  return {
    ...base,
    initContainers: [
      ...(init === undefined ? [] : [{ name: INIT_NAME, resources: init }]),
      ...(native ? [{ ...ours, restartPolicy: 'Always' }] : []),
      ...(base.initContainers ?? []),
    ],
    containers: [...(native ? [] : [ours]), ...(base.containers ?? [])],
  };
}

interface FitContainer {
  who: 'companion' | 'init';
  wanted: ContainerResources;
  pinned: Readonly<Record<string, boolean>>;
  base: PodSpec;
  rules: NamespaceRules;
  worlds: readonly boolean[];
  native: boolean;
}

/** min/max of optional bounds: undefined is "no bound". */
const least = (...values: (bigint | undefined)[]) =>
  values.reduce<bigint | undefined>(
    (a, b) => (b === undefined ? a : a === undefined || b < a ? b : a),
    undefined,
  );
const most = (...values: (bigint | undefined)[]) =>
  values.reduce<bigint | undefined>(
    (a, b) => (b === undefined ? a : a === undefined || b > a ? b : a),
    undefined,
  );

function fitContainer(c: FitContainer): ContainerResources {
  const items = c.rules.limitRanges.flatMap(limitItems).filter((item) => item.type === 'Container');
  const each = (pick: (item: (typeof items)[number]) => Quantity | undefined) =>
    items.map(pick).flatMap((q) => (q === undefined ? [] : [q.milli]));
  const min = (name: string) => most(...each((item) => item.min.get(name)));
  const max = (name: string) => least(...each((item) => item.max.get(name)));
  const ratio = (name: string) => least(...each((item) => item.maxLimitRequestRatio.get(name)));
  // The value LimitRanger writes into a container that declares none (the first LimitRange's wins).
  const defaultLimit = (name: string) =>
    items.map((item) => item.default.get(name)).find((q) => q !== undefined);
  const room = (kind: Kind, name: string) => least(...c.worlds.map((w) => aggregateRoom(c, kind, name, w)));
  const pod = shapeOf(c.base).pod;
  // Inside a pod-level budget the pod's own request holds the node's CPU and memory for every container: where
  // the budget has no more room, we draw less (down to nothing) rather than leave the pod untouched.
  const shares = (name: string) =>
    c.worlds.some((w) => w && (pod?.requests.has(name) === true || pod?.limits.has(name) === true));

  const pick = (
    field: string,
    want: string,
    lower: bigint | undefined,
    upper: bigint | undefined,
    floor: bigint,
    format: string,
  ) => {
    const wanted = quantity(want);
    if (c.pinned[field]) return want;
    let milli = most(wanted.milli, lower) ?? wanted.milli;
    if (upper !== undefined && milli > upper) milli = most(upper, floor, lower) ?? upper;
    return milli === wanted.milli ? want : show(milli, format);
  };

  const cpuRequest = pick(
    'requests.cpu',
    c.wanted.requests.cpu,
    min('cpu'),
    least(max('cpu'), room('requests', 'cpu')),
    // Inside a pod-level budget the pod's own request holds the node's CPU for every container: we may draw less.
    shares('cpu') ? 0n : quantity(c.wanted.requests.cpu).milli,
    'cpu',
  );
  let memoryRequest = pick(
    'requests.memory',
    c.wanted.requests.memory,
    min('memory'),
    least(max('memory'), room('requests', 'memory')),
    shares('memory') ? 0n : quantity(c.wanted.requests.memory).milli,
    'memory',
  );
  const request = () => quantity(memoryRequest).milli;
  const podLimit = (name: string) =>
    least(...c.worlds.map((w) => (w ? pod?.limits.get(name)?.milli : undefined)));
  const ratioBound = (name: string, of: bigint) => {
    const r = ratio(name);
    return r === undefined ? undefined : (of * r) / 1000n;
  };
  const memoryFloor =
    most(least(quantity(c.wanted.limits.memory).milli, quantity(MEMORY_LIMIT_FLOOR).milli), request()) ?? 0n;
  const memoryLimit = pick(
    'limits.memory',
    c.wanted.limits.memory,
    most(min('memory'), request()),
    least(max('memory'), podLimit('memory'), room('limits', 'memory'), ratioBound('memory', request())),
    memoryFloor,
    'memory',
  );
  // A limit still above ratio x request: the request moves up to meet it, where nothing pins or bounds it.
  const memoryRatio = ratio('memory');
  if (memoryRatio !== undefined && !c.pinned['requests.memory']) {
    const needed = (quantity(memoryLimit).milli * 1000n + memoryRatio - 1n) / memoryRatio;
    const upper = least(max('memory'), room('requests', 'memory'));
    if (needed > request() && (upper === undefined || needed <= upper))
      memoryRequest = show(needed, 'memory');
  }

  const cpu = quantity(cpuRequest).milli;
  const cpuLower = most(min('cpu'), cpu);
  const cpuUpper = least(max('cpu'), podLimit('cpu'), room('limits', 'cpu'), ratioBound('cpu', cpu));
  const clamp = (value: bigint) => {
    const raised = most(value, cpuLower) ?? value;
    return cpuUpper !== undefined && raised > cpuUpper ? (most(cpuUpper, cpuLower) ?? cpuUpper) : raised;
  };
  let cpuLimit = c.wanted.limits.cpu;
  if (cpuLimit === undefined) {
    const landing = defaultLimit('cpu');
    if (landing !== undefined) {
      const fits = clamp(landing.milli) === landing.milli;
      if (!fits) cpuLimit = show(clamp(landing.milli), 'cpu');
    } else if (demandsCpuLimit(c)) {
      cpuLimit = show(clamp(quantity(DEMANDED_CPU_LIMIT).milli), 'cpu');
    }
  }
  return {
    requests: { cpu: cpuRequest, memory: memoryRequest },
    limits: { ...(cpuLimit === undefined ? {} : { cpu: cpuLimit }), memory: memoryLimit },
  };
}

const ZERO: ContainerResources = { requests: { cpu: '0', memory: '0' }, limits: { cpu: '0', memory: '0' } };

/**
 * The most `who` may add to the pod's aggregate `kind` of `name` under the rules that bound the aggregate: the
 * pod's own request (`spec.resources`), a LimitRange of type Pod, and every ResourceQuota that matches the pod.
 * The aggregate is max(containers + native sidecars, largest init container + the sidecars before it): the
 * companion adds to the first part (as a native sidecar, to every init container after it too), our init
 * container, first of all, only competes in the second. A bound the pod fails without us is not ours to meet.
 */
function aggregateRoom(c: FitContainer, kind: Kind, name: string, podLevel: boolean): bigint | undefined {
  const placeholders = withOurs(c.base, ZERO, ZERO, c.native);
  const parts = aggregateParts(admittedShape(placeholders, c.rules, podLevel), kind);
  const sum = parts.sum.get(name)?.milli ?? 0n;
  const initMax = parts.initMax.get(name)?.milli ?? 0n;
  const before = sum > initMax ? sum : initMax;
  const taken = c.who === 'init' ? 0n : c.native ? before : sum;
  const pod = shapeOf(c.base).pod;
  const podSets =
    podLevel &&
    (kind === 'requests' ? pod?.requests.has(name) || pod?.limits.has(name) : pod?.limits.has(name));
  const bounds: (bigint | undefined)[] = [];
  if (podLevel && kind === 'requests') bounds.push((pod?.requests.get(name) ?? pod?.limits.get(name))?.milli);
  if (!podSets) {
    for (const item of c.rules.limitRanges.flatMap(limitItems)) {
      if (item.type === 'Pod') bounds.push(item.max.get(name)?.milli);
    }
    const guess = shapeOf(withOurs(c.base, c.wanted, c.wanted, c.native));
    for (const quota of c.rules.resourceQuotas) {
      if (!quotaMatches(quota, withOurs(c.base, c.wanted, c.wanted, c.native), guess, podLevel)) continue;
      const { hard, used } = quotaFacts(quota);
      for (const [resource, limit] of hard) {
        const usage = USAGE_OF[resource];
        if (usage?.kind !== kind || usage.name !== name) continue;
        bounds.push(limit.milli - (used.get(resource)?.milli ?? 0n));
      }
    }
  }
  const room = least(
    ...bounds
      .filter((bound) => bound !== undefined && bound >= before)
      .map((bound) => (bound as bigint) - taken),
  );
  return room === undefined || room >= 0n ? room : 0n;
}

/** A CPU limit some rule makes every container declare, with no default LimitRanger would write. */
function demandsCpuLimit(c: FitContainer): boolean {
  const items = c.rules.limitRanges.flatMap(limitItems);
  if (
    items.some(
      (item) => item.type === 'Container' && (item.max.has('cpu') || item.maxLimitRequestRatio.has('cpu')),
    )
  ) {
    return true;
  }
  const patched = withOurs(c.base, c.wanted, c.wanted, c.native);
  const shape = shapeOf(patched);
  return c.worlds.some(
    (podLevel) =>
      !(
        podLevel && POD_LEVEL_RESOURCES.some((n) => shape.pod?.requests.has(n) || shape.pod?.limits.has(n))
      ) &&
      c.rules.resourceQuotas.some(
        (quota) => quotaFacts(quota).hard.has('limits.cpu') && quotaMatches(quota, patched, shape, podLevel),
      ),
  );
}

/** Thousandths as the API server writes them: cpu in decimal SI, memory in binary SI (whole bytes). */
function show(milli: bigint, resource: string): string {
  if (resource === 'memory') return formatQuantity({ milli: milli - (milli % 1000n), format: 'BinarySI' });
  return formatQuantity({ milli, format: 'DecimalSI' });
}

function brief(text: string): string {
  const line = text.replaceAll(/\s+/g, ' ').trim();
  return line.length > 48 ? `${line.slice(0, 47)}…` : line;
}
