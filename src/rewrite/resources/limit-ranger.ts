// The LimitRanger admission plugin (kubernetes plugin/pkg/admission/limitranger/admission.go) over one pod: the
// defaults it writes into containers that declare nothing (PodMutateLimitFunc, run again after every webhook's
// patch, so they land on our containers too), and what it refuses (PodValidateLimitFunc). Items of type Pod hold
// the pod's total, which before 1.27 left out a resource some container does not declare (kube/version-rules.ts).

import {
  type Amounts,
  limitRangerPodAmounts,
  type PodShape,
  readAmounts,
  type Slot,
} from '../../kube/pod-resources.js';
import { formatQuantity, type Quantity } from '../../kube/quantity.js';
import type { VersionRules } from '../../kube/version-rules.js';
import { type LimitRange, type LimitRangeItem, ruleName, type Violation } from './namespace-rules.js';

export interface LimitItem {
  type: string;
  min: Amounts;
  max: Amounts;
  default: Amounts;
  defaultRequest: Amounts;
  maxLimitRequestRatio: Amounts;
}

/**
 * The items as the API server stores them (pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem: for type
 * Container a missing `default` is `max`, a missing `defaultRequest` is `default`, then `min`), so a LimitRange
 * written by hand for inject means what it means in the cluster.
 */
export function limitItems(limitRange: LimitRange): LimitItem[] {
  const items: LimitRangeItem[] = Array.isArray(limitRange.spec?.limits) ? limitRange.spec.limits : [];
  return items.map((item) => {
    const type = String(item.type ?? '');
    const min = readAmounts(item.min);
    const max = readAmounts(item.max);
    const defaults = readAmounts(item.default);
    const defaultRequest = readAmounts(item.defaultRequest);
    if (type === 'Container') {
      for (const [name, value] of max) if (!defaults.has(name)) defaults.set(name, value);
      for (const [name, value] of defaults) if (!defaultRequest.has(name)) defaultRequest.set(name, value);
      for (const [name, value] of min) if (!defaultRequest.has(name)) defaultRequest.set(name, value);
    }
    return {
      type,
      min,
      max,
      default: defaults,
      defaultRequest,
      maxLimitRequestRatio: readAmounts(item.maxLimitRequestRatio),
    };
  });
}

/**
 * mergePodResourceRequirements, one LimitRange after the other: each Container item's `default` (limits) and
 * `defaultRequest` (requests), the last item's winning within a LimitRange, into every container and init
 * container that has no value of that name yet.
 */
export function withLimitRangeDefaults(shape: PodShape, limitRanges: readonly LimitRange[]): PodShape {
  let next = shape;
  for (const limitRange of limitRanges) {
    const limits = new Map<string, Quantity>();
    const requests = new Map<string, Quantity>();
    for (const item of limitItems(limitRange)) {
      if (item.type !== 'Container') continue;
      for (const [name, value] of item.defaultRequest) requests.set(name, value);
      for (const [name, value] of item.default) limits.set(name, value);
    }
    const merge = (own: Amounts, defaults: Amounts) => new Map([...defaults, ...own]);
    const each = (slots: readonly Slot[]) =>
      slots.map((s) => ({
        ...s,
        resources: {
          requests: merge(s.resources.requests, requests),
          limits: merge(s.resources.limits, limits),
        },
      }));
    next = { ...next, initContainers: each(next.initContainers), containers: each(next.containers) };
  }
  return next;
}

const show = formatQuantity;

/** minConstraint, maxConstraint, limitRequestRatioConstraint: the API server's wording. */
function check(item: LimitItem, requests: Amounts, limits: Amounts): { field: string; message: string }[] {
  const found: { field: string; message: string }[] = [];
  const refuse = (field: string, message: string) => found.push({ field, message });
  const per = `per ${item.type}`;
  for (const [name, min] of item.min) {
    const request = requests.get(name);
    const limit = limits.get(name);
    if (request === undefined) {
      refuse(`requests.${name}`, `minimum ${name} usage ${per} is ${show(min)}.  No request is specified`);
    } else if (min.milli > request.milli) {
      refuse(
        `requests.${name}`,
        `minimum ${name} usage ${per} is ${show(min)}, but request is ${show(request)}`,
      );
    } else if (limit !== undefined && min.milli > limit.milli) {
      refuse(`limits.${name}`, `minimum ${name} usage ${per} is ${show(min)}, but limit is ${show(limit)}`);
    }
  }
  for (const [name, max] of item.max) {
    const request = requests.get(name);
    const limit = limits.get(name);
    if (limit === undefined) {
      refuse(`limits.${name}`, `maximum ${name} usage ${per} is ${show(max)}.  No limit is specified`);
    } else if (limit.milli > max.milli) {
      refuse(`limits.${name}`, `maximum ${name} usage ${per} is ${show(max)}, but limit is ${show(limit)}`);
    } else if (request !== undefined && request.milli > max.milli) {
      refuse(
        `requests.${name}`,
        `maximum ${name} usage ${per} is ${show(max)}, but request is ${show(request)}`,
      );
    }
  }
  for (const [name, ratio] of item.maxLimitRequestRatio) {
    const request = requests.get(name);
    const limit = limits.get(name);
    const says = `${name} max limit to request ratio ${per} is ${show(ratio)}`;
    if (request === undefined || request.milli === 0n) {
      refuse(`requests.${name}`, `${says}, but no request is specified or request is 0`);
    } else if (limit === undefined || limit.milli === 0n) {
      refuse(`limits.${name}`, `${says}, but no limit is specified or limit is 0`);
    } else if (limit.milli * 1000n > request.milli * ratio.milli) {
      // exceedsAllowed: limit > request × ratio, exactly (ratio is in thousandths here).
      const provided = Number((limit.milli * 1_000_000n) / request.milli) / 1_000_000;
      refuse(`limits.${name}`, `${says}, but provided ratio is ${provided.toFixed(6)}`);
    }
  }
  return found;
}

/** PodValidateLimitFunc on a pod that went through the defaults above (and the API server's own defaulting). */
export function limitRangeViolations(
  shape: PodShape,
  limitRanges: readonly LimitRange[],
  version: VersionRules,
): Violation[] {
  const podTotal = (kind: 'requests' | 'limits') =>
    limitRangerPodAmounts(shape, kind, version.podLevel, version.podItemsNeedEveryContainer);
  const violations: Violation[] = [];
  for (const limitRange of limitRanges) {
    const rule = ruleName('LimitRange', limitRange);
    limitItems(limitRange).forEach((item, index) => {
      if (item.type === 'Container') {
        for (const container of [...shape.containers, ...shape.initContainers]) {
          const { requests, limits } = container.resources;
          for (const found of check(item, requests, limits)) {
            violations.push({
              key: `${rule}/${index}/${container.name}/${found.field}`,
              message: `${rule}: ${found.message} (container ${container.name})`,
              container: container.name,
              field: found.field,
            });
          }
        }
      } else if (item.type === 'Pod') {
        const requests = podTotal('requests');
        const limits = podTotal('limits');
        for (const found of check(item, requests, limits)) {
          violations.push({
            key: `${rule}/${index}/${found.field}`,
            message: `${rule}: ${found.message}`,
            field: found.field,
          });
        }
      }
    });
  }
  return violations;
}
