// `init` flags -> validated InitOptions -> the init script's argv. Pure: every bad flag is a UsageError here,
// before any script runs.

import { badFlagValue, noArguments, parseFlags } from '../flags.js';
import { DEFAULT_INIT_PORTS, formatPortRanges, type PortRange, parsePortRanges } from '../ports.js';
import { COMPANION_UID } from '../scheme.js';

export const IPV6_MODES = ['auto', 'on', 'off'] as const;
export type Ipv6Mode = (typeof IPV6_MODES)[number];

export const BACKENDS = ['auto', 'nft', 'legacy'] as const;
export type Backend = (typeof BACKENDS)[number];

export interface InitOptions {
  ports: readonly PortRange[];
  /** The companion's user: its TCP to the pod's own addresses skips the mesh's outbound redirect. */
  uid: number;
  dryRun: boolean;
  cleanup: boolean;
  ipv6: Ipv6Mode;
  backend: Backend;
}

function oneOf<T extends string>(
  flag: string,
  allowed: readonly T[],
  value: string | undefined,
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw badFlagValue(`--${flag}`, value, allowed.join(', '));
}

/** (uid_t)-1 means "no change" to the kernel, so the largest real user id is one less. */
const MAX_UID = 4_294_967_294;

/**
 * A non-root user id, as init/rules.sh's is_uid accepts it. Root is refused: exempting uid 0 would let every
 * root process in the pod (often the app itself) skip the mesh for connections to the pod.
 */
export function parseUid(text: string): number {
  if (!/^[1-9]\d{0,9}$/.test(text) || Number(text) > MAX_UID) {
    throw badFlagValue('--uid', text, `a non-root user id 1-${MAX_UID}, the companion's runAsUser`);
  }
  return Number(text);
}

export function parseInitOptions(argv: readonly string[]): InitOptions {
  const { values, positionals } = parseFlags('init', argv, {
    ports: { type: 'string' },
    uid: { type: 'string' },
    'dry-run': { type: 'boolean' },
    cleanup: { type: 'boolean' },
    ipv6: { type: 'string' },
    backend: { type: 'string' },
  });
  noArguments('init', positionals);
  return {
    ports: values.ports === undefined ? DEFAULT_INIT_PORTS : parsePortRanges(values.ports),
    uid: values.uid === undefined ? COMPANION_UID : parseUid(values.uid),
    dryRun: values['dry-run'] === true,
    cleanup: values.cleanup === true,
    ipv6: oneOf('ipv6', IPV6_MODES, values.ipv6, 'auto'),
    backend: oneOf('backend', BACKENDS, values.backend, 'auto'),
  };
}

/** The same choices in init/osm-healthcheck-init.sh's flags, every one spelled out. */
export function scriptArgs(options: InitOptions): string[] {
  return [
    '--ports',
    formatPortRanges(options.ports),
    '--uid',
    `${options.uid}`,
    '--ipv6',
    options.ipv6,
    '--backend',
    options.backend,
    ...(options.dryRun ? ['--dry-run'] : []),
    ...(options.cleanup ? ['--cleanup'] : []),
  ];
}
