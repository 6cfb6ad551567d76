// The Pod Security level a pod's namespace enforces, as the PodSecurity admission plugin resolves it, and what
// that level means for the containers the rewrite adds. The plugin runs after every mutating webhook, so a patch
// it refuses turns an admissible pod into a refused one (a Deployment then stops creating pods).

export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

export const ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';
export const ENFORCE_VERSION_LABEL = 'pod-security.kubernetes.io/enforce-version';

/** The level and version the plugin enforces for a namespace, and where they came from (for messages). */
export interface EnforcedPolicy {
  level: PodSecurityLevel;
  /** `latest` or `v1.N`: which version of the level's checks. */
  version: string;
  /** `namespace "shop"`, `the cluster default`, `--pod-security`: said in warnings. */
  source: string;
}

/** What the rewrite knows of the pod's namespace. */
export type PodSecurityKnowledge =
  /** inject without --pod-security: the init container is added as before (nothing is checked). */
  | { state: 'unchecked' }
  | { state: 'known'; policy: EnforcedPolicy }
  /** The webhook has not seen the namespace (cache not synced, namespace just created): never guess. */
  | { state: 'unknown'; namespace: string; why: string };

export function parseLevel(text: string): PodSecurityLevel | undefined {
  return POD_SECURITY_LEVELS.find((level) => level === text);
}

// staging/src/k8s.io/pod-security-admission/api/helpers.go versionRegexp.
const VERSION = /^v1\.([0-9]|[1-9][0-9]*)$/;

/**
 * api.PolicyToEvaluate for the enforce mode: the namespace's labels over the admission configuration's
 * defaults.enforce. An invalid level label is enforced as `restricted`, an invalid version as `latest`: exactly
 * what the plugin does (ParseLevel, ParseVersion), so a typo in a label is the strictest level, not the default.
 */
export function enforcedPolicy(
  labels: Readonly<Record<string, string>> | undefined,
  defaultLevel: PodSecurityLevel,
  namespace: string,
): EnforcedPolicy {
  const levelText = labels?.[ENFORCE_LABEL];
  const versionText = labels?.[ENFORCE_VERSION_LABEL];
  const level = levelText === undefined ? defaultLevel : (parseLevel(levelText) ?? 'restricted');
  const version = versionText !== undefined && VERSION.test(versionText) ? versionText : 'latest';
  const source =
    levelText === undefined ? `namespace "${namespace}", by the cluster default` : `namespace "${namespace}"`;
  return { level, version, source };
}

/**
 * Whether the level admits the init container (root, NET_ADMIN and NET_RAW). Only `privileged` does: baseline
 * refuses both capabilities at every version (check_capabilities_baseline.go, since v1.0: the allowed set has
 * neither), and restricted includes baseline.
 */
export function admitsInitContainer(level: PodSecurityLevel): boolean {
  return level === 'privileged';
}

/** `"baseline:latest"`, as the plugin names a policy in its refusals. */
export function describePolicy(policy: EnforcedPolicy): string {
  return `"${policy.level}:${policy.version}"`;
}
