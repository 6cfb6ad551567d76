// The values our containers declare in one pod, chosen within the bounds the API server will hold them to: the
// defaults (or the pod's annotations) raised to a LimitRange's `min`, lowered to its `max`, to
// `maxLimitRequestRatio`, to the pod's own budget and to what its ResourceQuotas have left, never below what the
// companion needs to answer probes in time. resource-fit.ts then checks the whole pod; where these bounds cannot
// all hold, that check names the rule.

import {
  aggregateParts,
  everyContainerParts,
  hasPodLevelResources,
  type Kind,
  type PodShape,
  shapeOf,
} from '../../kube/pod-resources.js';
import { formatQuantity, parseQuantity, type Quantity } from '../../kube/quantity.js';
import type { VersionRules } from '../../kube/version-rules.js';
import { COMPANION_NAME, INIT_NAME } from '../companion.js';
import type { PodSpec } from '../types.js';
import { admittedShape, type NamespaceRules } from './admission-rules.js';
import type { ContainerResources } from './defaults.js';
import { limitItems } from './limit-ranger.js';
import { quotaFacts, quotaMatches, USAGE_OF } from './quota.js';

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

function quantity(text: string): Quantity {
  const parsed = parseQuantity(text);
  if ('invalid' in parsed) throw new Error(`${text}: ${parsed.invalid}`);
  return parsed;
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

export interface BoundsInputs {
  /** Our init container runs first and alone: it only competes with the largest init container. */
  who: 'companion' | 'init';
  /** The defaults with the pod's annotations (and --companion-cpu-limit's CPU limit). */
  wanted: ContainerResources;
  /** `requests.cpu`... set by an annotation or the setting: kept as given, judged by resource-fit.ts. */
  pinned: Readonly<Record<string, boolean>>;
  /** The pod without our containers. */
  base: PodSpec;
  rules: NamespaceRules;
  /** The rules of each version that may judge the pod (resource-fit.ts judgingRules): the values hold under all. */
  worlds: readonly VersionRules[];
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

/** What the namespace's rules and the pod bound each of our values by, per resource name, in milli-units. */
interface Bounds {
  /** The largest Container `min` of the LimitRanges. */
  min(name: string): bigint | undefined;
  /** The smallest Container `max`. */
  max(name: string): bigint | undefined;
  /** The smallest Container `maxLimitRequestRatio`, in milli (2 is 2000n). */
  ratio(name: string): bigint | undefined;
  /** The value LimitRanger writes into a container that declares none (the first LimitRange's wins). */
  defaultLimit(name: string): Quantity | undefined;
  /** What the pod's aggregate still has room for under every world. */
  room(kind: Kind, name: string): bigint | undefined;
  /** The pod's own limit (spec.resources) where a world counts pod-level resources. */
  podLimit(name: string): bigint | undefined;
  /**
   * Inside a pod-level budget the pod's own request holds the node's CPU and memory for every container: where
   * the budget has no more room, we draw less (down to nothing) rather than leave the pod untouched.
   */
  shares(name: string): boolean;
}

function boundsOf(c: BoundsInputs): Bounds {
  const items = c.rules.limitRanges.flatMap(limitItems).filter((item) => item.type === 'Container');
  const each = (pick: (item: (typeof items)[number]) => Quantity | undefined) =>
    items.map(pick).flatMap((q) => (q === undefined ? [] : [q.milli]));
  const pod = shapeOf(c.base).pod;
  return {
    min: (name) => most(...each((item) => item.min.get(name))),
    max: (name) => least(...each((item) => item.max.get(name))),
    ratio: (name) => least(...each((item) => item.maxLimitRequestRatio.get(name))),
    defaultLimit: (name) => items.map((item) => item.default.get(name)).find((q) => q !== undefined),
    room: (kind, name) => least(...c.worlds.map((w) => aggregateRoom(c, pod, kind, name, w))),
    podLimit: (name) =>
      least(...c.worlds.map((w) => (w.podLevel ? pod?.limits.get(name)?.milli : undefined))),
    shares: (name) =>
      c.worlds.some(
        (w) => w.podLevel && (pod?.requests.has(name) === true || pod?.limits.has(name) === true),
      ),
  };
}

/** `of` times the ratio bound of `name`, or no bound. */
function ratioBound(bounds: Bounds, name: string, of: bigint): bigint | undefined {
  const r = bounds.ratio(name);
  return r === undefined ? undefined : (of * r) / 1000n;
}

/**
 * `want` raised to `lower`, then lowered to `upper` but not below `floor` (nor `lower`): as given where the pod
 * pins `field`, and as written where nothing moved it.
 */
function pick(
  c: BoundsInputs,
  field: string,
  want: string,
  [lower, upper, floor]: [bigint | undefined, bigint | undefined, bigint],
  format: string,
): string {
  const wanted = quantity(want);
  if (c.pinned[field]) return want;
  let milli = most(wanted.milli, lower) ?? wanted.milli;
  if (upper !== undefined && milli > upper) milli = most(upper, floor, lower) ?? upper;
  return milli === wanted.milli ? want : show(milli, format, milli > wanted.milli);
}

function requestOf(c: BoundsInputs, bounds: Bounds, name: 'cpu' | 'memory'): string {
  const want = c.wanted.requests[name];
  const upper = least(bounds.max(name), bounds.room('requests', name));
  const floor = bounds.shares(name) ? 0n : quantity(want).milli;
  return pick(c, `requests.${name}`, want, [bounds.min(name), upper, floor], name);
}

/** The memory limit within its bounds, and the request raised to meet the limit's ratio where it must. */
function chooseMemory(c: BoundsInputs, bounds: Bounds): { request: string; limit: string } {
  const request = requestOf(c, bounds, 'memory');
  const requested = quantity(request).milli;
  const wantedLimit = quantity(c.wanted.limits.memory).milli;
  const floor = most(least(wantedLimit, quantity(MEMORY_LIMIT_FLOOR).milli), requested) ?? 0n;
  const upper = least(
    bounds.max('memory'),
    bounds.podLimit('memory'),
    bounds.room('limits', 'memory'),
    ratioBound(bounds, 'memory', requested),
  );
  const limit = pick(
    c,
    'limits.memory',
    c.wanted.limits.memory,
    [most(bounds.min('memory'), requested), upper, floor],
    'memory',
  );
  return { request: meetRatio(c, bounds, request, limit), limit };
}

/** A limit still above ratio x request: the request moves up to meet it, where nothing pins or bounds it. */
function meetRatio(c: BoundsInputs, bounds: Bounds, request: string, limit: string): string {
  const ratio = bounds.ratio('memory');
  if (ratio === undefined || c.pinned['requests.memory']) return request;
  const exact = (quantity(limit).milli * 1000n + ratio - 1n) / ratio;
  // Up to a whole Mi where that still fits: the value reads as the others do.
  const mebi = 1024n * 1024n * 1000n;
  const upper = least(bounds.max('memory'), bounds.room('requests', 'memory'));
  const rounded = ((exact + mebi - 1n) / mebi) * mebi;
  const needed = upper === undefined || rounded <= upper ? rounded : exact;
  const fits = needed > quantity(request).milli && (upper === undefined || needed <= upper);
  return fits ? show(needed, 'memory', true) : request;
}

/**
 * The CPU limit as wanted; without one, what LimitRanger would write moved into bounds (where it does not fit as
 * it is), or, where a rule demands a limit and none would be written, DEMANDED_CPU_LIMIT within bounds.
 */
function chooseCpuLimit(c: BoundsInputs, bounds: Bounds, cpuRequest: string): string | undefined {
  if (c.wanted.limits.cpu !== undefined) return c.wanted.limits.cpu;
  const cpu = quantity(cpuRequest).milli;
  const lower = most(bounds.min('cpu'), cpu);
  const upper = least(
    bounds.max('cpu'),
    bounds.podLimit('cpu'),
    bounds.room('limits', 'cpu'),
    ratioBound(bounds, 'cpu', cpu),
  );
  const clamp = (value: bigint) => {
    const raised = most(value, lower) ?? value;
    return upper !== undefined && raised > upper ? (most(upper, lower) ?? upper) : raised;
  };
  const landing = bounds.defaultLimit('cpu');
  if (landing !== undefined) {
    return clamp(landing.milli) === landing.milli ? undefined : show(clamp(landing.milli), 'cpu');
  }
  return demandsCpuLimit(c) ? show(clamp(quantity(DEMANDED_CPU_LIMIT).milli), 'cpu') : undefined;
}

export function chooseResources(c: BoundsInputs): ContainerResources {
  const bounds = boundsOf(c);
  const cpuRequest = requestOf(c, bounds, 'cpu');
  const memory = chooseMemory(c, bounds);
  const cpuLimit = chooseCpuLimit(c, bounds, cpuRequest);
  return {
    requests: { cpu: cpuRequest, memory: memory.request },
    limits: { ...(cpuLimit === undefined ? {} : { cpu: cpuLimit }), memory: memory.limit },
  };
}

const ZERO: ContainerResources = { requests: { cpu: '0', memory: '0' }, limits: { cpu: '0', memory: '0' } };

/**
 * The most `who` may add to the pod's aggregate `kind` of `name` under the rules that bound the aggregate: the
 * pod's own request (`spec.resources`, read once as `pod` by the caller), a LimitRange of type Pod, and every
 * ResourceQuota that matches the pod.
 * The aggregate is max(containers + native sidecars, largest init container + the sidecars before it): the
 * companion adds to the first part (as a native sidecar, to every init container after it too), our init
 * container, first of all, only competes in the second. A bound the pod fails without us is not ours to meet.
 * Before 1.27 a LimitRange of type Pod counts the containers' part only where every container declares `name`
 * (kube/version-rules.ts): where one of the pod's own does not, our value is not in what that item holds.
 */
function aggregateRoom(
  c: BoundsInputs,
  pod: PodShape['pod'],
  kind: Kind,
  name: string,
  version: VersionRules,
): bigint | undefined {
  const { podLevel } = version;
  // The pod's aggregates are only added up for a bound that has a value: most pods meet none.
  let admittedOnce: PodShape | undefined;
  const admitted = () => {
    admittedOnce ??= admittedShape(withOurs(c.base, ZERO, ZERO, c.native), c.rules, version);
    return admittedOnce;
  };
  // `sum` undefined: a container of the pod's own leaves `name` out of what the item holds (before 1.27 only).
  const partsRoom = (
    parts: { sum: ReadonlyMap<string, Quantity>; initMax: ReadonlyMap<string, Quantity> },
    leftOut = false,
  ) => {
    const sum = parts.sum.get(name)?.milli ?? (leftOut ? undefined : 0n);
    const initMax = parts.initMax.get(name)?.milli ?? 0n;
    const before = sum === undefined || sum < initMax ? initMax : sum;
    const native = c.native && version.nativeSidecars;
    const taken = c.who === 'init' ? 0n : sum === undefined ? undefined : native ? before : sum;
    return { before, taken };
  };
  type Room = ReturnType<typeof partsRoom>;
  let allOnce: Room | undefined;
  const all = () => {
    allOnce ??= partsRoom(aggregateParts(admitted(), kind));
    return allOnce;
  };
  const podSets =
    podLevel &&
    (kind === 'requests' ? pod?.requests.has(name) || pod?.limits.has(name) : pod?.limits.has(name));
  const bounds: { bound: bigint; of: () => Room }[] = [];
  const bound = (value: bigint | undefined, of = all) => {
    if (value !== undefined) bounds.push({ bound: value, of });
  };
  if (podLevel && kind === 'requests') bound((pod?.requests.get(name) ?? pod?.limits.get(name))?.milli);
  if (!podSets) {
    let limitRangerOnce: Room | undefined;
    const limitRanger = () => {
      limitRangerOnce ??= version.podItemsNeedEveryContainer
        ? partsRoom(everyContainerParts(admitted(), kind), true)
        : all();
      return limitRangerOnce;
    };
    for (const item of c.rules.limitRanges.flatMap(limitItems)) {
      if (item.type === 'Pod') bound(item.max.get(name)?.milli, limitRanger);
    }
    if (c.rules.resourceQuotas.length > 0) {
      // Which quotas match is judged on the pod with our wanted values (our requests make a BestEffort pod Burstable).
      const patched = withOurs(c.base, c.wanted, c.wanted, c.native);
      const shape = shapeOf(patched);
      for (const quota of c.rules.resourceQuotas) {
        if (!quotaMatches(quota, patched, shape, podLevel)) continue;
        const { hard, used } = quotaFacts(quota);
        for (const [resource, limit] of hard) {
          const usage = USAGE_OF[resource];
          if (usage?.kind !== kind || usage.name !== name) continue;
          bound(limit.milli - (used.get(resource)?.milli ?? 0n));
        }
      }
    }
  }
  const room = least(
    ...bounds.flatMap(({ bound: b, of }) => {
      const { before, taken } = of();
      return b < before || taken === undefined ? [] : [b - taken];
    }),
  );
  return room === undefined || room >= 0n ? room : 0n;
}

/**
 * A CPU limit some rule makes every container declare, with no default LimitRanger would write. Before 1.27, a
 * LimitRange of type Pod that bounds the pod's CPU limit (`max`, `maxLimitRequestRatio`) does so too wherever every
 * container of the pod declares one: a companion without it would make the pod's limit "not specified".
 */
function demandsCpuLimit(c: BoundsInputs): boolean {
  const items = c.rules.limitRanges.flatMap(limitItems);
  if (
    items.some(
      (item) => item.type === 'Container' && (item.max.has('cpu') || item.maxLimitRequestRatio.has('cpu')),
    )
  ) {
    return true;
  }
  const podItemOnCpuLimit = items.some(
    (item) => item.type === 'Pod' && (item.max.has('cpu') || item.maxLimitRequestRatio.has('cpu')),
  );
  const everyContainerDeclares = (version: VersionRules) =>
    admittedShape(c.base, c.rules, version).containers.every((s) => s.resources.limits.has('cpu'));
  if (
    podItemOnCpuLimit &&
    c.worlds.some((version) => version.podItemsNeedEveryContainer && everyContainerDeclares(version))
  ) {
    return true;
  }
  if (c.rules.resourceQuotas.length === 0) return false;
  const patched = withOurs(c.base, c.wanted, c.wanted, c.native);
  const shape = shapeOf(patched);
  return c.worlds.some(
    ({ podLevel }) =>
      !(podLevel && hasPodLevelResources(shape)) &&
      c.rules.resourceQuotas.some(
        (quota) => quotaFacts(quota).hard.has('limits.cpu') && quotaMatches(quota, patched, shape, podLevel),
      ),
  );
}

/**
 * Thousandths as the API server writes them: cpu in decimal SI, memory in binary SI of whole bytes, rounded up
 * for a value raised to a lower bound and down for one lowered to an upper bound, so it stays within it.
 */
function show(milli: bigint, resource: string, up = false): string {
  if (resource !== 'memory') return formatQuantity({ milli, format: 'DecimalSI' });
  const rest = milli % 1000n;
  const bytes = rest === 0n ? milli : milli - rest + (up ? 1000n : 0n);
  return formatQuantity({ milli: bytes, format: 'BinarySI' });
}
