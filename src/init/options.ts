// `init` flags -> validated InitOptions -> the init script's argv. Pure: every bad flag is a UsageError here,
// before any script runs.

import { isIP } from 'node:net';
import { badFlagValue, noArguments, parseFlags, usageError } from '../flags.js';
import { DEFAULT_INIT_PORTS, formatPortRanges, type PortRange, parsePortRanges } from '../ports.js';
import { COMPANION_UID } from '../scheme.js';
import { SEAL_FILE } from '../seal/record.js';
import { AGENT_PORT } from '../seal/sources.js';

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
  /** Seal when the node agent proves it can (docs/init.md#sealed-pods); undefined: today's open bypass. */
  seal: SealRequest | undefined;
}

export interface SealRequest {
  /** The node's address (inject: the pod's status.hostIP), where the agent answers. */
  agentAddress: string;
  agentPort: number;
  /** Where the verdict goes for the companion: the volume the two share. */
  sealFile: string;
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
    'seal-via': { type: 'string' },
    'agent-port': { type: 'string' },
    'seal-file': { type: 'string' },
  });
  noArguments('init', positionals);
  const seal = sealRequest(values['seal-via'], values['agent-port'], values['seal-file']);
  if (seal !== undefined && (values['dry-run'] === true || values.cleanup === true)) {
    throw usageError(
      `--seal-via with --${values.cleanup === true ? 'cleanup' : 'dry-run'}`,
      'one of them: the seal is proved by a run that applies',
    );
  }
  return {
    ports: values.ports === undefined ? DEFAULT_INIT_PORTS : parsePortRanges(values.ports),
    uid: values.uid === undefined ? COMPANION_UID : parseUid(values.uid),
    dryRun: values['dry-run'] === true,
    cleanup: values.cleanup === true,
    ipv6: oneOf('ipv6', IPV6_MODES, values.ipv6, 'auto'),
    backend: oneOf('backend', BACKENDS, values.backend, 'auto'),
    seal,
  };
}

function sealRequest(
  via: string | undefined,
  port: string | undefined,
  file: string | undefined,
): SealRequest | undefined {
  if (via === undefined) {
    if (port !== undefined || file !== undefined) {
      throw usageError(
        `--${port !== undefined ? 'agent-port' : 'seal-file'} without --seal-via`,
        '--seal-via ADDRESS too',
      );
    }
    return undefined;
  }
  // Empty where the downward API had no hostIP to give: a pod that cannot be sealed, never a failed init.
  if (via !== '' && isIP(via) === 0)
    throw badFlagValue('--seal-via', via, "the node's IP address (status.hostIP)");
  if (port !== undefined && (!/^[1-9]\d{0,4}$/.test(port) || Number(port) > 65535)) {
    throw badFlagValue('--agent-port', port, 'a port 1-65535');
  }
  return {
    agentAddress: via,
    agentPort: port === undefined ? AGENT_PORT : Number(port),
    sealFile: file ?? SEAL_FILE,
  };
}

/**
 * The same choices in init/osm-healthcheck-init.sh's flags, every one spelled out. A sealing run is two: `prove`
 * (open, and root reaches the agent), then `sealed` or `open` as the proof said.
 */
export function scriptArgs(options: InitOptions, step: 'prove' | 'sealed' | 'open' = 'open'): string[] {
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
    ...(step === 'sealed' ? ['--sealed'] : []),
    ...(step === 'prove' && options.seal !== undefined && options.seal.agentAddress !== ''
      ? ['--agent', options.seal.agentAddress, '--agent-port', `${options.seal.agentPort}`]
      : []),
  ];
}
