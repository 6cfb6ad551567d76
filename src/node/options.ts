// `node` flags -> validated NodeOptions -> the node script's argv. Pure: every bad flag is a UsageError here,
// before any script runs or anything listens.

import { badFlagValue, flagOrEnv, noArguments, parseFlags, sourceName, usageError } from '../flags.js';
import { BACKENDS } from '../init/options.js';
import type { KubeApi } from '../kube/api/in-cluster.js';
import { KUBE_API_ENV, type KubeApiFlag, kubeApiChoice } from '../kube-api-choice.js';
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
/** deploy/node sets it from the downward API (spec.nodeName). */
export const NODE_NAME_ENV = 'OSM_HEALTHCHECK_NODE_NAME';
/** How often the agent checks its rules are still there, as kube-proxy resyncs its own. */
export const DEFAULT_RESYNC_SECONDS = 10;

export type NodeMode = 'run' | 'once' | 'dry-run' | 'cleanup';

/** The agent's own Node object on its API server: where its pod networks are read, and who posts its events. */
export interface OwnNode {
  name: string;
  api: KubeApi;
}

/** The pod networks: given, or the node's spec.podCIDRs, read at start. */
export type PodCidrSource = { from: 'flag'; cidrs: readonly Cidr[] } | { from: 'node'; node: OwnNode };

export interface NodeOptions {
  mode: NodeMode;
  podCidrs: PodCidrSource;
  /** Where pod events go (a sealed or open pod's `Sealed`/`NotSealed`), or why none are posted. */
  events: { node: OwnNode } | { off: string };
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

/** A DNS subdomain, as a Node's name is. */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function parseNodeOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): NodeOptions {
  const { values, positionals } = parseFlags('node', argv, {
    'pod-cidr': { type: 'string' },
    backend: { type: 'string' },
    resync: { type: 'string' },
    listen: { type: 'string' },
    port: { type: 'string' },
    'node-name': { type: 'string' },
    'kube-api': { type: 'string' },
    'kube-ca': { type: 'string' },
    'kube-token-file': { type: 'string' },
    once: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    cleanup: { type: 'boolean' },
  });
  noArguments('node', positionals);
  const modes = (['once', 'dry-run', 'cleanup'] as const).filter((mode) => values[mode] === true);
  if (modes.length > 1) throw usageError(`--${modes.join(' and --')} both given`, 'one of them');
  const mode: NodeMode = modes[0] ?? 'run';
  const backend = values.backend ?? (env[BACKEND_ENV] || 'auto');
  if (!(NODE_BACKENDS as readonly string[]).includes(backend))
    throw badFlagValue(
      sourceName(values.backend, '--backend', BACKEND_ENV),
      backend,
      NODE_BACKENDS.join(', '),
    );
  const node = ownNode(values, env);
  const cidrText = flagOrEnv(values['pod-cidr'], POD_CIDR_ENV);
  let podCidrs: PodCidrSource;
  if (cidrText !== undefined) {
    podCidrs = {
      from: 'flag',
      cidrs: parseCidrs(cidrText, sourceName(values['pod-cidr'], '--pod-cidr', POD_CIDR_ENV)),
    };
  } else if (mode === 'cleanup') {
    podCidrs = { from: 'flag', cidrs: [] };
  } else if ('node' in node) {
    podCidrs = { from: 'node', node: node.node };
  } else {
    throw usageError(
      `--pod-cidr (or env ${POD_CIDR_ENV}) is required: the node's own networks cannot be read, as ${node.off}`,
      "this node's pod networks, e.g. 10.88.0.0/16,fd00:88::/64 (kubectl get node NAME -o jsonpath='{.spec.podCIDRs}')",
    );
  }
  return {
    mode,
    podCidrs,
    events: node,
    backend: backend as NodeBackend,
    resyncSeconds:
      values.resync === undefined ? DEFAULT_RESYNC_SECONDS : positiveInteger(values.resync, '--resync', 3600),
    listen: values.listen,
    port: values.port === undefined ? AGENT_PORT : positiveInteger(values.port, '--port', 65535),
  };
}

/** The agent's node and API server, or why it has none: no node name, or no API server outside a pod. */
function ownNode(
  values: Partial<Record<'node-name' | KubeApiFlag, string>>,
  env: NodeJS.ProcessEnv,
): { node: OwnNode } | { off: string } {
  const given = (flag: KubeApiFlag) => {
    const text = values[flag] ?? (env[KUBE_API_ENV[flag]] || undefined);
    return text === undefined
      ? undefined
      : { text, from: sourceName(values[flag], `--${flag}`, KUBE_API_ENV[flag]) };
  };
  const api = kubeApiChoice(given, env);
  const name = values['node-name'] ?? (env[NODE_NAME_ENV] || undefined);
  if (name !== undefined && (name.length > 253 || !NODE_NAME.test(name))) {
    throw badFlagValue(sourceName(values['node-name'], '--node-name', NODE_NAME_ENV), name, "a Node's name");
  }
  if (name === undefined) return { off: `no --node-name (env ${NODE_NAME_ENV}) is given` };
  if (api === undefined) {
    return { off: 'no API server is known (--kube-api, or KUBERNETES_SERVICE_HOST in a pod)' };
  }
  return { node: { name, api } };
}

/** The node script's flags for one run, with the pod networks resolved: `ensure` puts back only what is missing. */
export function nodeScriptArgs(
  options: { backend: NodeBackend; cidrs: readonly Cidr[] },
  run: 'apply' | 'ensure' | 'dry-run' | 'cleanup',
): string[] {
  return [
    '--ports',
    formatPortRanges(DEFAULT_INIT_PORTS),
    ...(options.cidrs.length === 0 ? [] : ['--pod-cidr', options.cidrs.map((c) => c.text).join(',')]),
    '--backend',
    options.backend,
    ...(run === 'apply' ? [] : [`--${run}`]),
  ];
}
