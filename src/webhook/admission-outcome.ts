// What became of one admission, as a value from fixed sets for the metrics: injected, untouched and why, or an
// error. Pure: from the rewrite's decision (its cause for a pod left as it came) and what the webhook knew of the
// namespace when it asked (a level or rules not known yet is the webhook's caches, not the namespace's rules).

import type { CompanionDecision, RewriteOptions, UntouchedCause } from '../rewrite/types.js';

export const ADMISSION_OUTCOMES = ['injected', 'untouched', 'error'] as const;
export type AdmissionOutcomeName = (typeof ADMISSION_OUTCOMES)[number];

/** Why a pod was admitted as it came (or, for a workload, with warnings only). */
export const UNTOUCHED_REASONS = [
  /** The pod template's annotation `osm-healthcheck/rewrite-probes: "false"`. */
  'opted_out',
  /** osm-edge or OSM injected it: their sidecar answers on 15901-15904. */
  'mesh_pod',
  /** spec.hostNetwork: the companion's ports and the init container's rules would be the node's. */
  'host_network',
  /** spec.os.name windows: our containers are Linux containers. */
  'windows',
  /** The namespace's Pod Security level refuses the init container. */
  'pod_security',
  /** A LimitRange, ResourceQuota or the pod's own resources leave no room for our containers. */
  'admission_rule',
  /** The namespace's Pod Security level or rules are not in the webhook's caches (yet). */
  'namespace_not_known',
  /** A pod that must end (Jobs) where native sidecars are not known or not there, or annotated skip. */
  'run_to_completion',
  /** No probe for the companion to answer. */
  'no_probe',
  /** Already what the rewrite makes of it: our own pod again (reinvocation), or inject's output. */
  'already_injected',
  /** A workload (Deployment, Job...): warnings only, its pods are patched as they are created. */
  'workload',
  /** Not a pod CREATE: another operation, a subresource, a kind the webhook does not know. */
  'not_a_pod',
] as const;
export type UntouchedReason = (typeof UNTOUCHED_REASONS)[number];

export const ERROR_REASONS = [
  /** Not an AdmissionReview the webhook can read (400). */
  'bad_request',
  /** A pod (or annotation) the rewrite refuses, with the field in the warning. */
  'invalid_pod',
  /** A bug of ours. */
  'internal',
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

export type AdmissionOutcome =
  | { outcome: 'injected'; reason: 'patched' }
  | { outcome: 'untouched'; reason: UntouchedReason }
  | { outcome: 'error'; reason: ErrorReason };

/** Every (outcome, reason) pair, in order: the series made up front. */
export const OUTCOME_PAIRS: readonly AdmissionOutcome[] = [
  { outcome: 'injected', reason: 'patched' },
  ...UNTOUCHED_REASONS.map((reason) => ({ outcome: 'untouched' as const, reason })),
  ...ERROR_REASONS.map((reason) => ({ outcome: 'error' as const, reason })),
];

export const untouched = (reason: UntouchedReason): AdmissionOutcome => ({ outcome: 'untouched', reason });
export const failedWith = (reason: ErrorReason): AdmissionOutcome => ({ outcome: 'error', reason });

const BY_CAUSE: Readonly<Record<UntouchedCause, UntouchedReason>> = {
  'run-to-completion': 'run_to_completion',
  'host-network': 'host_network',
  windows: 'windows',
  'pod-security': 'pod_security',
  'admission-rules': 'admission_rule',
  'osm-mesh': 'mesh_pod',
};

/**
 * Why the rewrite left the companion out. A Pod Security level or namespace rules refuse only where they are
 * known; where the webhook's caches did not know them, the pod is left untouched for that, which is its reason.
 */
export function untouchedReason(
  decision: Extract<CompanionDecision, { companion: 'untouched' }>,
  knew: Pick<RewriteOptions, 'podSecurity' | 'namespaceRules'>,
): UntouchedReason {
  if (decision.cause === 'pod-security' && knew.podSecurity?.state === 'unknown')
    return 'namespace_not_known';
  if (decision.cause === 'admission-rules' && knew.namespaceRules?.state === 'unknown') {
    return 'namespace_not_known';
  }
  return BY_CAUSE[decision.cause];
}

/**
 * A pod CREATE the rewrite went through: injected where the patch adds our companion, else untouched and why.
 * `patched`: the response carries a patch; `answered`: the rewrite's probe table has an entry.
 */
export function podOutcome(
  placement: CompanionDecision | undefined,
  patched: boolean,
  answered: boolean,
  knew: Pick<RewriteOptions, 'podSecurity' | 'namespaceRules'>,
): AdmissionOutcome {
  if (placement?.companion === 'untouched') return untouched(untouchedReason(placement, knew));
  if (patched) return { outcome: 'injected', reason: 'patched' };
  return untouched(answered ? 'already_injected' : 'no_probe');
}
