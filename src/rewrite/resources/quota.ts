// The ResourceQuota admission plugin over one new pod (k8s.io/apiserver pkg/admission/plugin/resourcequota
// controller.go checkRequest, with the pod evaluator of kubernetes pkg/quota/v1/evaluator/core/pods.go): which
// quotas match the pod (their scopes), what they make every container declare (Constraints), and whether the
// pod's usage fits what is left (status.hard - status.used). The pod's usage is the same sum on every version we
// support (up to 1.27 PodUsageFunc's own `quota.Add` over the containers, then `quota.Max` with each init
// container; then resourcehelper.PodRequests), but for native sidecars (1.28 gate, 1.29) and pod-level resources
// (1.32 alpha, 1.34 beta), which kube/version-rules.ts decides.

import {
  type Amounts,
  hasPodLevelResources,
  isBestEffort,
  type PodShape,
  podAmounts,
  readAmounts,
} from '../../kube/pod-resources.js';
import { formatQuantity, type Quantity } from '../../kube/quantity.js';
import type { PodSpec } from '../types.js';
import { type ResourceQuota, ruleName, type Violation } from './namespace-rules.js';

/**
 * pods.go validationSet: "if a quota tracks cpu or memory related resources, the incoming pod is required to have
 * those values set" on every container and init container (a mistake kept for compatibility, its comment says).
 */
const MUST_DECLARE = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/** The pod evaluator's usage names for a pod's requests and limits (podComputeUsageHelper). */
export const USAGE_OF: Readonly<Record<string, { kind: 'requests' | 'limits'; name: string }>> = {
  cpu: { kind: 'requests', name: 'cpu' },
  'requests.cpu': { kind: 'requests', name: 'cpu' },
  memory: { kind: 'requests', name: 'memory' },
  'requests.memory': { kind: 'requests', name: 'memory' },
  'limits.cpu': { kind: 'limits', name: 'cpu' },
  'limits.memory': { kind: 'limits', name: 'memory' },
  'ephemeral-storage': { kind: 'requests', name: 'ephemeral-storage' },
  'requests.ephemeral-storage': { kind: 'requests', name: 'ephemeral-storage' },
  'limits.ephemeral-storage': { kind: 'limits', name: 'ephemeral-storage' },
};

export interface QuotaFacts {
  name: string;
  hard: Amounts;
  used: Amounts;
}

/**
 * What admission reads: `status.hard` and `status.used`, as the quota controller keeps them. A quota written by
 * hand for inject has no status: its `spec.hard` counts, and nothing as used.
 */
export function quotaFacts(quota: ResourceQuota): QuotaFacts {
  const status = readAmounts(quota.status?.hard);
  return {
    name: ruleName('ResourceQuota', quota),
    hard: status.size > 0 ? status : readAmounts(quota.spec?.hard),
    used: readAmounts(quota.status?.used),
  };
}

interface ScopeSelector {
  scopeName?: string;
  operator?: string;
  values?: string[];
}

function selectors(quota: ResourceQuota): ScopeSelector[] {
  const scopes = Array.isArray(quota.spec?.scopes) ? quota.spec.scopes : [];
  const selector = quota.spec?.scopeSelector as { matchExpressions?: ScopeSelector[] } | undefined;
  const expressions = Array.isArray(selector?.matchExpressions) ? selector.matchExpressions : [];
  return [...scopes.map((scopeName) => ({ scopeName, operator: 'Exists' })), ...expressions];
}

function crossNamespaceAffinity(spec: PodSpec): boolean {
  const affinity = spec.affinity as Record<string, Record<string, unknown[]> | undefined> | undefined;
  const terms = (kind: string) => [
    ...((affinity?.[kind]?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Record<
      string,
      unknown
    >[]),
    ...(
      (affinity?.[kind]?.preferredDuringSchedulingIgnoredDuringExecution ?? []) as Record<string, unknown>[]
    ).map((weighted) => (weighted.podAffinityTerm ?? {}) as Record<string, unknown>),
  ];
  return [...terms('podAffinity'), ...terms('podAntiAffinity')].some(
    (term) =>
      (Array.isArray(term.namespaces) && term.namespaces.length > 0) || term.namespaceSelector != null,
  );
}

/** podMatchesScopeFunc; a scope pods do not have (VolumeAttributesClass...) matches no pod. */
function matchesScope(selector: ScopeSelector, spec: PodSpec, shape: PodShape, podLevel: boolean): boolean {
  const deadline = spec.activeDeadlineSeconds;
  const terminating = typeof deadline === 'number' && deadline >= 0;
  const priority = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  const values = selector.values ?? [];
  switch (selector.scopeName) {
    case 'Terminating':
      return terminating;
    case 'NotTerminating':
      return !terminating;
    case 'BestEffort':
      return isBestEffort(shape, podLevel);
    case 'NotBestEffort':
      return !isBestEffort(shape, podLevel);
    case 'CrossNamespacePodAffinity':
      return crossNamespaceAffinity(spec);
    case 'PriorityClass':
      // A label selector on { PriorityClass: <name> }, the label absent when the pod has none.
      switch (selector.operator) {
        case 'Exists':
          return priority !== '';
        case 'DoesNotExist':
          return priority === '';
        case 'In':
          return priority !== '' && values.includes(priority);
        case 'NotIn':
          return priority === '' || !values.includes(priority);
        default:
          return false;
      }
    default:
      return false;
  }
}

/** generic.Matches: every scope matches, and the quota tracks some resource of pods. */
export function quotaMatches(
  quota: ResourceQuota,
  spec: PodSpec,
  shape: PodShape,
  podLevel: boolean,
): boolean {
  const tracked = [...quotaFacts(quota).hard.keys()].some(
    (name) =>
      USAGE_OF[name] !== undefined || name === 'pods' || name === 'count/pods' || name.includes('hugepages-'),
  );
  return tracked && selectors(quota).every((selector) => matchesScope(selector, spec, shape, podLevel));
}

/** The pod's usage of one quota resource (PodUsageFunc), or undefined where the pod adds nothing to it. */
export function podUsage(shape: PodShape, resource: string, podLevel: boolean): Quantity | undefined {
  const usage = USAGE_OF[resource];
  return usage === undefined ? undefined : podAmounts(shape, usage.kind, podLevel).get(usage.name);
}

/** Constraints and the usage check for the quotas that match the pod; `shape` after every default. */
export function quotaViolations(
  spec: PodSpec,
  shape: PodShape,
  quotas: readonly ResourceQuota[],
  podLevel: boolean,
): Violation[] {
  const violations: Violation[] = [];
  for (const quota of quotas) {
    if (!quotaMatches(quota, spec, shape, podLevel)) continue;
    const { name, hard, used } = quotaFacts(quota);
    // With pod-level resources set (and the feature on), containers need not declare anything (pods.go).
    if (!(podLevel && hasPodLevelResources(shape))) {
      for (const resource of MUST_DECLARE.filter((r) => hard.has(r))) {
        const usage = USAGE_OF[resource] as { kind: 'requests' | 'limits'; name: string };
        for (const container of [...shape.containers, ...shape.initContainers]) {
          if (container.resources[usage.kind].has(usage.name)) continue;
          violations.push({
            key: `${name}/declare/${resource}/${container.name}`,
            message: `${name} makes every container declare ${resource}, which container ${container.name} does not`,
            container: container.name,
            field: `${usage.kind}.${usage.name}`,
          });
        }
      }
    }
    for (const [resource, limit] of hard) {
      const adds = podUsage(shape, resource, podLevel);
      if (adds === undefined || adds.milli === 0n) continue;
      const before = used.get(resource)?.milli ?? 0n;
      if (before + adds.milli <= limit.milli) continue;
      const left = limit.milli - before;
      const usage = USAGE_OF[resource] as { kind: 'requests' | 'limits'; name: string };
      violations.push({
        key: `${name}/exceeded/${resource}`,
        message: `${name} has ${resource} ${formatQuantity({ milli: left > 0n ? left : 0n, format: limit.format })} left, the pod needs ${formatQuantity(adds)}`,
        field: `${usage.kind}.${usage.name}`,
      });
    }
  }
  return violations;
}
