// `node` flags -> validated NodeOptions -> the node script's argv. Pure: every bad flag is a UsageError here,
// before any script runs or anything listens.

import { badFlagValue, flagOrEnv, noArguments, parseFlags, sourceName, usageError } from '../flags.js';
import { BACKENDS } from '../init/options.js';
import { DEFAULT_INIT_PORTS, formatPortRanges } from '../ports.js';
import { AGENT_PORT } from '../seal/sources.js';
import { type Cidr, parseCidrs } from './cidr.js';

export const POD_CIDR_ENV = 'OSM_HEALTHCHECK_POD_CIDR';
export const BACKEND_ENV = 'OSM_HEALTHCHECK_NODE_BACKEND';
/**
 * init's iptables backends, and the native nftables one (nft, init/nft-rules.sh), which only the node agent
 * writes: a pod's rules follow its mesh's, and every mesh's init writes iptables.
 */
export const NODE_BACKENDS = [...BACKENDS, 'nftables'] as const;
export type NodeBackend = (typeof NODE_BACKENDS)[number];
/** How often the agent checks its rules are still there, as kube-proxy resyncs its own. */
export const DEFAULT_RESYNC_SECONDS = 10;

export type NodeMode = 'run' | 'once' | 'dry-run' | 'cleanup';

export interface NodeOptions {
  mode: NodeMode;
  podCidrs: readonly Cidr[];
  backend: NodeBackend;
  resyncSeconds: number;
  /** Where the proof endpoint listens; undefined: every address of the node. */
  listen: string | undefined;
  port: number;
}

function positiveInteger(text: string, flag: string, max: number): number {
  if (!/^[1-9]\d{0,5}$/.test(text) || Number(text) > max)
    throw badFlagValue(flag, text, `an integer 1-${max}`);
  return Number(text);
}

export function parseNodeOptions(argv: readonly string[]): NodeOptions {
  const { values, positionals } = parseFlags('node', argv, {
    'pod-cidr': { type: 'string' },
    backend: { type: 'string' },
    resync: { type: 'string' },
    listen: { type: 'string' },
    port: { type: 'string' },
    once: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    cleanup: { type: 'boolean' },
  });
  noArguments('node', positionals);
  const modes = (['once', 'dry-run', 'cleanup'] as const).filter((mode) => values[mode] === true);
  if (modes.length > 1) throw usageError(`--${modes.join(' and --')} both given`, 'one of them');
  const mode: NodeMode = modes[0] ?? 'run';
  const cidrText = flagOrEnv(values['pod-cidr'], POD_CIDR_ENV);
  if (mode !== 'cleanup' && cidrText === undefined) {
    throw usageError(
      `--pod-cidr (or env ${POD_CIDR_ENV}) is required`,
      "this node's pod networks, e.g. 10.88.0.0/16,fd00:88::/64 (kubectl get node NAME -o jsonpath='{.spec.podCIDRs}')",
    );
  }
  const backend = flagOrEnv(values.backend, BACKEND_ENV) ?? 'auto';
  if (!(NODE_BACKENDS as readonly string[]).includes(backend))
    throw badFlagValue(
      sourceName(values.backend, '--backend', BACKEND_ENV),
      backend,
      NODE_BACKENDS.join(', '),
    );
  return {
    mode,
    podCidrs:
      cidrText === undefined
        ? []
        : parseCidrs(cidrText, sourceName(values['pod-cidr'], '--pod-cidr', POD_CIDR_ENV)),
    backend: backend as NodeBackend,
    resyncSeconds:
      values.resync === undefined ? DEFAULT_RESYNC_SECONDS : positiveInteger(values.resync, '--resync', 3600),
    listen: values.listen,
    port: values.port === undefined ? AGENT_PORT : positiveInteger(values.port, '--port', 65535),
  };
}

/** The node script's flags for one run: `ensure` puts back only what is missing. */
export function nodeScriptArgs(
  options: NodeOptions,
  run: 'apply' | 'ensure' | 'dry-run' | 'cleanup',
): string[] {
  return [
    '--ports',
    formatPortRanges(DEFAULT_INIT_PORTS),
    ...(options.podCidrs.length === 0 ? [] : ['--pod-cidr', options.podCidrs.map((c) => c.text).join(',')]),
    '--backend',
    options.backend,
    ...(run === 'apply' ? [] : [`--${run}`]),
  ];
}
