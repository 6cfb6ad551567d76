// What the API server refuses in a new pod for its resources, in the order it works: defaulting on decode
// (again after every webhook's patch), LimitRanger's defaults, then validation (pkg/apis/core/validation
// ValidateResourceRequirements and validatePodResourceConsistency), LimitRanger and ResourceQuota. Pure: the
// rewrite compares the pod as it came with the patched pod, and what only the patched pod fails is ours.

import {
  aggregate,
  defaultedShape,
  POD_LEVEL_RESOURCES,
  type PodShape,
  shapeOf,
  withoutSidecars,
} from '../../kube/pod-resources.js';
import { formatQuantity } from '../../kube/quantity.js';
import type { VersionRules } from '../../kube/version-rules.js';
import type { PodSpec } from '../types.js';
import { limitRangeViolations, withLimitRangeDefaults } from './limit-ranger.js';
import type { LimitRange, ResourceQuota, Violation } from './namespace-rules.js';
import { quotaViolations } from './quota.js';

export interface NamespaceRules {
  limitRanges: readonly LimitRange[];
  resourceQuotas: readonly ResourceQuota[];
}

/** The pod as admission sees it last under `version`'s rules: decoded, defaulted, with LimitRanger's defaults. */
export function admittedShape(spec: PodSpec, rules: NamespaceRules, version: VersionRules): PodShape {
  const decoded = version.nativeSidecars ? shapeOf(spec) : withoutSidecars(shapeOf(spec));
  return withLimitRangeDefaults(defaultedShape(decoded, version.podLevel), rules.limitRanges);
}

/** What the API server refuses in the pod, judged by the rules of one version (kube/version-rules.ts). */
export function admissionViolations(
  spec: PodSpec,
  rules: NamespaceRules,
  version: VersionRules,
): Violation[] {
  const shape = admittedShape(spec, rules, version);
  const { podLevel } = version;
  return [
    ...containerViolations(shape),
    ...(podLevel ? podLevelViolations(shape) : []),
    ...limitRangeViolations(shape, rules.limitRanges, version),
    ...quotaViolations(spec, shape, rules.resourceQuotas, podLevel),
  ];
}

/** ValidateResourceRequirements: a container's request of a resource is at most its limit of it. */
function containerViolations(shape: PodShape): Violation[] {
  return [...shape.initContainers, ...shape.containers].flatMap((container) =>
    [...container.resources.requests].flatMap(([name, request]): Violation[] => {
      const limit = container.resources.limits.get(name);
      if (limit === undefined || request.milli <= limit.milli) return [];
      return [
        {
          key: `valid/${container.name}/${name}`,
          message: `container ${container.name}: resources.requests: Invalid value: "${formatQuantity(request)}": must be less than or equal to ${name} limit of ${formatQuantity(limit)}`,
          container: container.name,
          field: `requests.${name}`,
        },
      ];
    }),
  );
}

/**
 * Pod-level resources (validatePodResources, validatePodResourceConsistency): the pod's requests at most its
 * limits, at least the containers' aggregate requests, and no container's limit above the pod's.
 */
function podLevelViolations(shape: PodShape): Violation[] {
  const { pod } = shape;
  if (pod === undefined) return [];
  const violations: Violation[] = [];
  const containers = aggregate(shape, 'requests');
  for (const name of POD_LEVEL_RESOURCES) {
    const request = pod.requests.get(name);
    const limit = pod.limits.get(name);
    if (request !== undefined && limit !== undefined && request.milli > limit.milli) {
      violations.push({
        key: `pod-level/request-limit/${name}`,
        message: `spec.resources.requests[${name}]: Invalid value: "${formatQuantity(request)}": must be less than or equal to ${name} limit of ${formatQuantity(limit)}`,
        field: `requests.${name}`,
      });
    }
    const needed = containers.get(name);
    if (request !== undefined && needed !== undefined && needed.milli > request.milli) {
      violations.push({
        key: `pod-level/aggregate/${name}`,
        message: `spec.resources.requests[${name}]: Invalid value: "${formatQuantity(request)}": must be greater than or equal to aggregate container requests of ${formatQuantity(needed)}`,
        field: `requests.${name}`,
      });
    }
    if (limit === undefined) continue;
    for (const container of shape.containers) {
      const own = container.resources.limits.get(name);
      if (own === undefined || own.milli <= limit.milli) continue;
      violations.push({
        key: `pod-level/limit/${container.name}/${name}`,
        message: `container ${container.name}: limits[${name}]: Invalid value: "${formatQuantity(own)}": must be less than or equal to pod limits of ${formatQuantity(limit)}`,
        container: container.name,
        field: `limits.${name}`,
      });
    }
  }
  return violations;
}
