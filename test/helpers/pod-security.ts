// The PodSecurity admission plugin's checks, for the fields the rewrite writes or relies on: container
// capabilities, privileged, allowPrivilegeEscalation, runAsNonRoot, runAsUser, seccompProfile.
// Written from kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_*.go (each check with
// the version it starts at, and its exact message), independently of src/, so a test against it catches a pod
// the real plugin would refuse. Volumes, host namespaces, host ports, probe hosts, sysctls, AppArmor, SELinux and
// procMount are not checked here: the rewrite never writes them.

type Json = Record<string, unknown>;
type Level = 'privileged' | 'baseline' | 'restricted';

interface Container {
  name: string;
  securityContext?: Json;
  [field: string]: unknown;
}

interface Check {
  level: 'baseline' | 'restricted';
  since: number;
  check(spec: Json): { reason: string; detail: string } | undefined;
}

/** capabilities_baseline: the default set of container runtimes (check_capabilities_baseline.go). */
const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

function containers(spec: Json): Container[] {
  const list = (key: string) => (Array.isArray(spec[key]) ? (spec[key] as Container[]) : []);
  return [...list('containers'), ...list('initContainers'), ...list('ephemeralContainers')];
}

const sc = (c: Container): Json => (c.securityContext ?? {}) as Json;
const caps = (c: Container): Json => (sc(c).capabilities ?? {}) as Json;
const podSc = (spec: Json): Json => (spec.securityContext ?? {}) as Json;
const quote = (names: Iterable<string>) => [...names].map((n) => `"${n}"`).join(', ');
const noun = (n: number) => (n === 1 ? 'container' : 'containers');

const CHECKS: Check[] = [
  {
    level: 'baseline',
    since: 0,
    check(spec) {
      const bad = containers(spec).filter((c) => sc(c).privileged === true);
      if (bad.length === 0) return undefined;
      const names = bad.map((c) => c.name);
      return {
        reason: 'privileged',
        detail: `${noun(names.length)} ${quote(names)} must not set securityContext.privileged=true`,
      };
    },
  },
  {
    level: 'baseline',
    since: 0,
    check(spec) {
      const bad: string[] = [];
      const added = new Set<string>();
      for (const c of containers(spec)) {
        const extra = ((caps(c).add ?? []) as string[]).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
        if (extra.length === 0) continue;
        bad.push(c.name);
        for (const cap of extra) added.add(cap);
      }
      if (bad.length === 0) return undefined;
      return {
        reason: 'non-default capabilities',
        detail: `${noun(bad.length)} ${quote(bad)} must not include ${quote([...added].sort())} in securityContext.capabilities.add`,
      };
    },
  },
  {
    level: 'baseline',
    since: 0,
    check(spec) {
      const unconfined = (profile: unknown) => (profile as Json | undefined)?.type === 'Unconfined';
      const setters = [
        ...(unconfined(podSc(spec).seccompProfile) ? ['pod'] : []),
        ...containers(spec)
          .filter((c) => unconfined(sc(c).seccompProfile))
          .map((c) => `container "${c.name}"`),
      ];
      if (setters.length === 0) return undefined;
      return {
        reason: 'seccompProfile',
        detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to "Unconfined"`,
      };
    },
  },
  {
    level: 'restricted',
    since: 8,
    check(spec) {
      const bad = containers(spec)
        .filter((c) => sc(c).allowPrivilegeEscalation !== false)
        .map((c) => c.name);
      if (bad.length === 0) return undefined;
      return {
        reason: 'allowPrivilegeEscalation != false',
        detail: `${noun(bad.length)} ${quote(bad)} must set securityContext.allowPrivilegeEscalation=false`,
      };
    },
  },
  {
    level: 'restricted',
    since: 22,
    check(spec) {
      const missingDrop: string[] = [];
      const adding: string[] = [];
      const forbidden = new Set<string>();
      for (const c of containers(spec)) {
        if (c.securityContext?.capabilities === undefined) {
          missingDrop.push(c.name);
          continue;
        }
        if (!((caps(c).drop ?? []) as string[]).includes('ALL')) missingDrop.push(c.name);
        const extra = ((caps(c).add ?? []) as string[]).filter((cap) => cap !== 'NET_BIND_SERVICE');
        if (extra.length > 0) adding.push(c.name);
        for (const cap of extra) forbidden.add(cap);
      }
      const details = [
        ...(missingDrop.length > 0
          ? [
              `${noun(missingDrop.length)} ${quote(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`,
            ]
          : []),
        ...(adding.length > 0
          ? [
              `${noun(adding.length)} ${quote(adding)} must not include ${quote([...forbidden].sort())} in securityContext.capabilities.add`,
            ]
          : []),
      ];
      return details.length === 0
        ? undefined
        : { reason: 'unrestricted capabilities', detail: details.join('; ') };
    },
  },
  {
    level: 'restricted',
    since: 0,
    check(spec) {
      const pod = podSc(spec).runAsNonRoot;
      const setters = pod === false ? ['pod'] : [];
      const explicit = containers(spec).filter((c) => sc(c).runAsNonRoot === false);
      if (explicit.length > 0) setters.push(`${noun(explicit.length)} ${quote(explicit.map((c) => c.name))}`);
      if (setters.length > 0) {
        return {
          reason: 'runAsNonRoot != true',
          detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
        };
      }
      const implicit = containers(spec).filter((c) => sc(c).runAsNonRoot === undefined && pod !== true);
      if (implicit.length === 0) return undefined;
      return {
        reason: 'runAsNonRoot != true',
        detail: `pod or ${noun(implicit.length)} ${quote(implicit.map((c) => c.name))} must set securityContext.runAsNonRoot=true`,
      };
    },
  },
  {
    level: 'restricted',
    since: 23,
    check(spec) {
      const setters = podSc(spec).runAsUser === 0 ? ['pod'] : [];
      const bad = containers(spec).filter((c) => sc(c).runAsUser === 0);
      if (bad.length > 0) setters.push(`${noun(bad.length)} ${quote(bad.map((c) => c.name))}`);
      if (setters.length === 0) return undefined;
      return { reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0` };
    },
  },
  {
    level: 'restricted',
    since: 19,
    check(spec) {
      const valid = (type: unknown) => type === 'RuntimeDefault' || type === 'Localhost';
      const podProfile = podSc(spec).seccompProfile as Json | undefined;
      const setters: string[] = [];
      const values = new Set<string>();
      if (podProfile !== undefined && !valid(podProfile.type)) {
        setters.push('pod');
        values.add(String(podProfile.type));
      }
      const podSet = podProfile !== undefined && valid(podProfile.type);
      const explicit: string[] = [];
      const implicit: string[] = [];
      for (const c of containers(spec)) {
        const profile = sc(c).seccompProfile as Json | undefined;
        if (profile === undefined) {
          if (!podSet) implicit.push(c.name);
        } else if (!valid(profile.type)) {
          explicit.push(c.name);
          values.add(String(profile.type));
        }
      }
      if (explicit.length > 0) setters.push(`${noun(explicit.length)} ${quote(explicit)}`);
      if (setters.length > 0) {
        return {
          reason: 'seccompProfile',
          detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${quote([...values].sort())}`,
        };
      }
      if (implicit.length === 0) return undefined;
      return {
        reason: 'seccompProfile',
        detail: `pod or ${noun(implicit.length)} ${quote(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
      };
    },
  },
];

/** `latest`, or `v1.N` -> N. */
function minorOf(version: string): number {
  return version === 'latest' ? Number.POSITIVE_INFINITY : Number(version.slice('v1.'.length));
}

/** The plugin's forbidden reasons for `spec` at `level:version`, `reason (detail)` each, in its check order. */
export function podSecurityViolations(spec: Json, level: Level, version = 'latest'): string[] {
  if (level === 'privileged') return [];
  const minor = minorOf(version);
  return CHECKS.filter((c) => (level === 'restricted' || c.level === 'baseline') && c.since <= minor).flatMap(
    (c) => {
      const found = c.check(spec);
      return found === undefined ? [] : [`${found.reason} (${found.detail})`];
    },
  );
}

/**
 * The API server's refusal of a pod in a namespace with `labels` (api.PolicyToEvaluate: an invalid level is
 * restricted, an invalid version latest), or undefined when admitted. `defaultLevel`: the admission
 * configuration's defaults.enforce.
 */
export function podSecurityRefusal(
  name: string,
  spec: Json,
  labels: Record<string, string>,
  defaultLevel: Level = 'privileged',
): string | undefined {
  const levelLabel = labels['pod-security.kubernetes.io/enforce'];
  const versionLabel = labels['pod-security.kubernetes.io/enforce-version'];
  const level: Level =
    levelLabel === undefined
      ? defaultLevel
      : ((['privileged', 'baseline', 'restricted'] as const).find((l) => l === levelLabel) ?? 'restricted');
  const version =
    versionLabel !== undefined && /^v1\.(0|[1-9]\d*)$/.test(versionLabel) ? versionLabel : 'latest';
  const violations = podSecurityViolations(spec, level, version);
  if (violations.length === 0) return undefined;
  return `pods "${name}" is forbidden: violates PodSecurity "${level}:${version}": ${violations.join(', ')}`;
}
