// A pod's resources as the API server adds them up: each container's requests and limits after defaulting, the
// pod's aggregate (k8s.io/component-helpers/resource helpers.go PodRequests, PodLimits, and the copy LimitRanger
// keeps in plugin/pkg/admission/limitranger/admission.go podRequests/podLimits), pod-level resources
// (`spec.resources`, KEP-2837) and whether the pod is BestEffort (pkg/apis/core/v1/helper/qos GetPodQOS).

import { isObject } from '../json.js';
import { parseQuantity, type Quantity } from './quantity.js';

/** The fields of a pod spec the aggregates read; any richer pod type (rewrite/types.ts PodSpec) fits it. */
export interface PodResourceFields {
  containers?: unknown;
  initContainers?: unknown;
  resources?: unknown;
}

/** Resource name -> quantity; a name absent is "not specified", which LimitRanger and quota tell from zero. */
export type Amounts = ReadonlyMap<string, Quantity>;

export interface Requirements {
  requests: Amounts;
  limits: Amounts;
}

export type Kind = keyof Requirements;

export interface Slot {
  name: string;
  /** An init container with `restartPolicy: Always`: counted with the containers (KEP-753). */
  sidecar: boolean;
  resources: Requirements;
}

/** What the aggregates read of one pod, in the order of its lists. */
export interface PodShape {
  initContainers: readonly Slot[];
  containers: readonly Slot[];
  /** `spec.resources`; absent when the pod has none. */
  pod: Requirements | undefined;
}

/** The resources pod-level resources cover (helpers.go supportedPodLevelResources). */
export const POD_LEVEL_RESOURCES: readonly string[] = ['cpu', 'memory'];

const EMPTY: Requirements = { requests: new Map(), limits: new Map() };

/** A ResourceList; entries that are no quantity are left out (the API server refuses them on its own). */
export function readAmounts(value: unknown): Map<string, Quantity> {
  const amounts = new Map<string, Quantity>();
  if (!isObject(value)) return amounts;
  for (const [name, text] of Object.entries(value)) {
    const parsed = parseQuantity(String(text).trim());
    if (!('invalid' in parsed)) amounts.set(name, parsed);
  }
  return amounts;
}

export function readRequirements(value: unknown): Requirements {
  if (!isObject(value)) return EMPTY;
  return { requests: readAmounts(value.requests), limits: readAmounts(value.limits) };
}

function slot(container: Record<string, unknown>, init: boolean): Slot {
  return {
    name: String(container.name ?? ''),
    sidecar: init && container.restartPolicy === 'Always',
    resources: readRequirements(container.resources),
  };
}

export function shapeOf(spec: PodResourceFields): PodShape {
  const list = (items: unknown, init: boolean) =>
    Array.isArray(items) ? items.filter(isObject).map((item) => slot(item, init)) : [];
  return {
    initContainers: list(spec.initContainers, true),
    containers: list(spec.containers, false),
    pod: isObject(spec.resources) ? readRequirements(spec.resources) : undefined,
  };
}

/** Whether `spec.resources` sets cpu or memory (helpers.go IsPodLevelResourcesSet). */
export function hasPodLevelResources(shape: PodShape): boolean {
  const { pod } = shape;
  return POD_LEVEL_RESOURCES.some((name) => pod?.requests.has(name) || pod?.limits.has(name));
}

export function add(a: Quantity, b: Quantity): Quantity {
  return { milli: a.milli + b.milli, format: a.format };
}

function addInto(total: Map<string, Quantity>, amounts: Amounts): void {
  for (const [name, quantity] of amounts) {
    const had = total.get(name);
    total.set(name, had === undefined ? quantity : add(had, quantity));
  }
}

function maxInto(total: Map<string, Quantity>, amounts: Amounts): void {
  for (const [name, quantity] of amounts) {
    const had = total.get(name);
    if (had === undefined || quantity.milli > had.milli) total.set(name, quantity);
  }
}

/**
 * The two parts of the containers' aggregate: `sum`, every container and native sidecar; `initMax`, the largest
 * run-to-completion init container plus the sidecars started before it. The pod needs the larger of the two
 * (helpers.go AggregateContainerRequests / AggregateContainerLimits).
 */
export function aggregateParts(shape: PodShape, kind: Kind): { sum: Amounts; initMax: Amounts } {
  const sum = new Map<string, Quantity>();
  for (const container of shape.containers) addInto(sum, container.resources[kind]);
  const sidecars = new Map<string, Quantity>();
  const initMax = new Map<string, Quantity>();
  for (const container of shape.initContainers) {
    const own = container.resources[kind];
    if (container.sidecar) {
      addInto(sum, own);
      addInto(sidecars, own);
      maxInto(initMax, sidecars);
    } else {
      const running = new Map(own);
      addInto(running, sidecars);
      maxInto(initMax, running);
    }
  }
  return { sum, initMax };
}

/**
 * The same two parts as LimitRanger up to 1.26 added them for its items of type Pod (admission.go `sum`, then the
 * larger of that and each init container): a resource some container does not declare is left out of `sum`.
 */
export function everyContainerParts(shape: PodShape, kind: Kind): { sum: Amounts; initMax: Amounts } {
  const sum = new Map<string, Quantity>();
  const names = new Set(shape.containers.flatMap((c) => [...c.resources[kind].keys()]));
  for (const name of names) {
    const each = shape.containers.map((c) => c.resources[kind].get(name));
    if (each.every((q) => q !== undefined))
      sum.set(
        name,
        each.reduce((a, b) => add(a, b)),
      );
  }
  const initMax = new Map<string, Quantity>();
  for (const container of shape.initContainers) maxInto(initMax, container.resources[kind]);
  return { sum, initMax };
}

/** What LimitRanger's items of type Pod hold a pod to: `aggregate`, or before 1.27 `everyContainerParts`. */
export function limitRangerPodAmounts(
  shape: PodShape,
  kind: Kind,
  podLevel: boolean,
  everyContainer: boolean,
): Amounts {
  if (!everyContainer) return podAmounts(shape, kind, podLevel);
  const { sum, initMax } = everyContainerParts(shape, kind);
  const total = new Map(sum);
  maxInto(total, initMax);
  return total;
}

/** The pod as an API server without native sidecars keeps it: `restartPolicy` dropped, every init container plain. */
export function withoutSidecars(shape: PodShape): PodShape {
  if (!shape.initContainers.some((s) => s.sidecar)) return shape;
  return { ...shape, initContainers: shape.initContainers.map((s) => ({ ...s, sidecar: false })) };
}

export function aggregate(shape: PodShape, kind: Kind): Amounts {
  const { sum, initMax } = aggregateParts(shape, kind);
  const total = new Map(sum);
  maxInto(total, initMax);
  return total;
}

/** PodRequests / PodLimits: the aggregate, cpu and memory taken from `spec.resources` where it sets them. */
export function podAmounts(shape: PodShape, kind: Kind, podLevel: boolean): Amounts {
  const total = new Map(aggregate(shape, kind));
  if (podLevel && shape.pod !== undefined) {
    for (const name of POD_LEVEL_RESOURCES) {
      const set = shape.pod[kind].get(name);
      if (set !== undefined) total.set(name, set);
    }
  }
  return total;
}

function withDefaultRequests(resources: Requirements): Requirements {
  const requests = new Map(resources.requests);
  for (const [name, limit] of resources.limits) if (!requests.has(name)) requests.set(name, limit);
  return { requests, limits: resources.limits };
}

/**
 * pkg/apis/core/v1/defaults.go, run on every decode of a pod (so again after a webhook's patch): a container's
 * missing request defaults to its limit (SetDefaults_Pod); with pod-level resources, a missing pod-level request
 * of cpu or memory defaults to the containers' aggregate where some container requests it, else to the pod-level
 * limit (defaultPodRequests), only where the pod sets pod-level limits.
 */
export function defaultedShape(shape: PodShape, podLevel: boolean): PodShape {
  const each = (slots: readonly Slot[]) =>
    slots.map((s) => ({ ...s, resources: withDefaultRequests(s.resources) }));
  const next = { ...shape, initContainers: each(shape.initContainers), containers: each(shape.containers) };
  const { pod } = next;
  if (!podLevel || pod === undefined || pod.limits.size === 0) return next;
  const requests = new Map(pod.requests);
  const containers = aggregate(next, 'requests');
  for (const name of POD_LEVEL_RESOURCES) {
    if (requests.has(name)) continue;
    const from = containers.get(name) ?? pod.limits.get(name);
    if (from !== undefined) requests.set(name, from);
  }
  return { ...next, pod: { requests, limits: pod.limits } };
}

/** GetPodQOS == BestEffort: no positive cpu or memory request or limit, pod-level ones first where set. */
export function isBestEffort(shape: PodShape, podLevel: boolean): boolean {
  const positive = (resources: Requirements) =>
    POD_LEVEL_RESOURCES.some(
      (name) =>
        (resources.requests.get(name)?.milli ?? 0n) > 0n || (resources.limits.get(name)?.milli ?? 0n) > 0n,
    );
  if (podLevel && shape.pod !== undefined && hasPodLevelResources(shape)) return !positive(shape.pod);
  return ![...shape.initContainers, ...shape.containers].some((s) => positive(s.resources));
}
