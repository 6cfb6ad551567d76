// What the companion and the init container declare in one pod, so that a pod the API server admits is still
// admitted with them: the defaults and the pod's annotations (resources.ts) fitted to the pod's own budget
// (`spec.resources`) and to its namespace's LimitRanges and ResourceQuotas, then checked against everything
// the API server checks (admission-rules.ts). Where nothing fits, the pod is left untouched with a warning that
// names the rule; a value an annotation pins that cannot fit is an error at that annotation.

import { briefMessage } from '../../errors.js';
import { hasPodLevelResources, type PodShape, shapeOf } from '../../kube/pod-resources.js';
import { EVERY_SUPPORTED_VERSION, rulesOfVersion, type VersionRules } from '../../kube/version-rules.js';
import { COMPANION_NAME, INIT_NAME } from '../companion.js';
import type { ClusterKnowledge } from '../placement.js';
import type { Container, PodSpec } from '../types.js';
import { admissionViolations, type NamespaceRules } from './admission-rules.js';
import {
  type CompanionResources,
  type ContainerResources,
  CPU_REQUEST_ANNOTATION,
  decideResources,
  type InvalidAnnotation,
  MEMORY_LIMIT_ANNOTATION,
  MEMORY_REQUEST_ANNOTATION,
} from './defaults.js';
import type { NamespaceRulesKnowledge, Violation } from './namespace-rules.js';
import { chooseResources, withOurs } from './resource-bounds.js';

export type ResourceFit =
  /** `init`: where the init container is added. */
  | { fit: 'declared'; companion: ContainerResources; init?: ContainerResources }
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
  /** The version that will judge the pod, whose rules the fit follows (kube/version-rules.ts); all where not known. */
  cluster: ClusterKnowledge;
}

const OURS = new Set([COMPANION_NAME, INIT_NAME]);

/** Pure, table-tested (test/rewrite/resource-fit.test.ts). */
export function fitResources(inputs: FitInputs): ResourceFit {
  const decided = decideResources(inputs.annotations);
  if ('invalid' in decided) return { fit: 'invalid', invalid: decided.invalid };
  const { rules: knowledge } = inputs;
  if (knowledge.state === 'unknown') {
    return {
      fit: 'untouched',
      reason: `left untouched: the LimitRanges and ResourceQuotas of namespace "${knowledge.namespace}" are not known (${briefMessage(knowledge.why, 48)}), and they may refuse our containers`,
    };
  }
  const rules: NamespaceRules =
    knowledge.state === 'known' ? knowledge : { limitRanges: [], resourceQuotas: [] };
  const base = withoutOurs(inputs.spec);
  const worlds = judgingRules(inputs.cluster, shapeOf(base), rules);
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
    chooseResources({ who, wanted, pinned, base, rules, worlds, native: inputs.native });
  const companion = fitted('companion');
  const init = inputs.withInit ? fitted('init') : undefined;
  const patched = withOurs(base, companion, init, inputs.native);
  for (const version of worlds) {
    const refused = admissionViolations(patched, rules, version);
    // The pod as it came is judged only where the patched pod is refused: what it is refused for too is not ours.
    if (refused.length === 0) continue;
    const before = new Set(admissionViolations(base, rules, version).map((v) => v.key));
    const ours = refused.filter((v) => !before.has(v.key));
    const [first] = ours;
    if (first === undefined) continue;
    // A value an annotation pins is the cause wherever one of them is refused: the error goes to it.
    for (const violation of ours) {
      const annotation = pinnedAnnotation(violation, pinned);
      if (annotation === undefined) continue;
      const problem = `${annotation.value(decided.resources)} cannot fit: ${violation.message}`;
      return { fit: 'invalid', invalid: { annotation: annotation.name, problem } };
    }
    // A CPU limit refused is the cluster-wide setting's: the warning says so, as the error names an annotation.
    const bySetting =
      pinned['limits.cpu'] &&
      ours.some((v) => v.field === 'limits.cpu' && (v.container === undefined || OURS.has(v.container)));
    const setting = bySetting ? `; our CPU limit is --companion-cpu-limit ${inputs.companionCpuLimit}` : '';
    return { fit: 'untouched', reason: `left untouched: ${first.message}${setting}` };
  }
  return { fit: 'declared', companion, ...(init === undefined ? {} : { init }) };
}

/** Which annotation pins each of our values (the CPU limit is --companion-cpu-limit's, no annotation's). */
const ANNOTATIONS: Readonly<Record<string, { name: string; value: (r: CompanionResources) => string }>> = {
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
 * The rules the pod is judged by: the known version's, else every supported version's, so the decision holds
 * wherever the pod goes. Pod-level resources only matter where `spec.resources` is set: without it, one world less.
 * And the versions differ only in how LimitRanger, the quota evaluator and pod-level resources add a pod up: where
 * none of them judges it (no LimitRange, no ResourceQuota, no `spec.resources`), every version judges alike (each
 * container's request at most its limit), and one world stands for all.
 */
export function judgingRules(
  cluster: ClusterKnowledge,
  shape: PodShape,
  rules: NamespaceRules,
): VersionRules[] {
  const all =
    cluster.state === 'known'
      ? rulesOfVersion(cluster.version, cluster.sidecarGate)
      : EVERY_SUPPORTED_VERSION;
  const podLevel = hasPodLevelResources(shape);
  const judged = rules.limitRanges.length > 0 || rules.resourceQuotas.length > 0 || podLevel;
  if (!judged) return all.slice(0, 1).map((first) => ({ ...first, podLevel: false }));
  const seen = new Map<string, VersionRules>();
  for (const version of all) {
    const kept = { ...version, podLevel: podLevel && version.podLevel };
    seen.set(JSON.stringify(kept), kept);
  }
  return [...seen.values()];
}

function withoutOurs(spec: PodSpec): PodSpec {
  const notOurs = (list: Container[] | undefined) => list?.filter((c) => !OURS.has(String(c?.name ?? '')));
  const next: PodSpec = { ...spec, containers: notOurs(spec.containers) ?? [] };
  if (spec.initContainers !== undefined) next.initContainers = notOurs(spec.initContainers);
  return next;
}
