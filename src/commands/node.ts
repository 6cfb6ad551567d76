// `osm-healthcheck node`: the node agent (a DaemonSet, hostNetwork, NET_ADMIN): writes the host's SNAT of its own
// TCP to local pods' 15901-15904 (init/osm-healthcheck-node.sh), checks every --resync seconds that it is still
// there and puts it back if another process flushed it, and answers init's seal proofs. On SIGTERM it stops and
// leaves the rules in place, so a restart or an upgrade never opens a window in which probes fail
// (docs/install.md#the-node-agent).

import { existsSync } from 'node:fs';
import { HealthcheckError } from '../errors.js';
import { NODE_SCRIPT, runInitScript } from '../init/script.js';
import { inClusterClient } from '../kube/api/in-cluster.js';
import { createLogger, type Logger } from '../log.js';
import type { Cidr } from '../node/cidr.js';
import { fetchPodCidrs } from '../node/node-pod-cidrs.js';
import {
  BACKEND_ENV,
  NODE_NAME_ENV,
  type NodeBackend,
  type NodeOptions,
  nodeScriptArgs,
  POD_CIDR_ENV,
  type PodCidrSource,
  parseNodeOptions,
} from '../node/options.js';
import { serveProofs } from '../node/prove-server.js';
import { type SealEvents, sealEvents } from '../node/seal-events.js';
import { AGENT_PORT, SEAL_SOURCES } from '../seal/sources.js';
import type { Command } from './command.js';

const usage = `Usage: osm-healthcheck node [flags]

The node agent, one per node (hostNetwork, root with NET_ADMIN): the host's own TCP to a local pod's ports
15901-15904 (kubelet's probes) leaves from ${SEAL_SOURCES.v4} (IPv4) or ${SEAL_SOURCES.v6} (IPv6),
nat chain OSM_HEALTHCHECK_NODE jumped from the top of POSTROUTING (with native nftables: table ip/ip6
osm_healthcheck_node, ahead of srcnat), so a sealed pod can let exactly that source
past its mesh. It answers init's proof requests on port ${AGENT_PORT}, and puts its rules back when another process
flushes them. Stopping it leaves the rules in place; only --cleanup removes them.

Flags:
  --pod-cidr LIST     this node's pod networks, e.g. 10.88.0.0/16,fd00:88::/64 (env ${POD_CIDR_ENV});
                      default: the node's spec.podCIDRs, read from the API server
  --node-name NAME    this node (env ${NODE_NAME_ENV}; deploy/node sets it): its pod networks and
                      the pod events Sealed and NotSealed need it
  --kube-api URL      the API server (OSM_HEALTHCHECK_KUBE_API; default the in-cluster address)
  --kube-ca FILE      its CA (OSM_HEALTHCHECK_KUBE_CA; default the service account's)
  --kube-token-file FILE
                      bearer token (OSM_HEALTHCHECK_KUBE_TOKEN_FILE; default the service account's)
  --backend auto|nft|legacy|nftables
                      nft: iptables-nft, legacy: iptables-legacy, nftables: native nftables (nft);
                      auto (default): nftables where kube-proxy runs in nftables mode, else the iptables
                      backend holding more rules (kube-proxy's), nft on a tie (env ${BACKEND_ENV})
  --resync SECONDS    how often the rules are checked and put back (default 10)
  --listen ADDRESS    where the proof endpoint listens (default every address of the node)
  --port PORT         the proof endpoint's port (default ${AGENT_PORT})
  --once              write the rules and exit
  --dry-run           print the iptables-restore (nft -f) input per family and change nothing
  --cleanup           remove the rules from every backend (after every sealed pod is gone or open again)
  --help, --version`;

type Rules = { backend: NodeBackend; cidrs: readonly Cidr[] };

function script(rules: Rules, run: Parameters<typeof nodeScriptArgs>[1], log?: Logger) {
  return runInitScript(nodeScriptArgs(rules, run), {
    script: NODE_SCRIPT,
    onNote: (line) => (log === undefined ? process.stderr.write(`${line}\n`) : log.info(line)),
  });
}

/** Every --resync seconds, --ensure; a restore is a warning, a failure an error, and the next round tries again. */
function keepRules(options: NodeOptions, rules: Rules, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const round = async () => {
    try {
      const out = await script(rules, 'ensure', log);
      for (const line of out.split('\n').filter((l) => l.includes('restored'))) log.warn(line);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'cannot check the node rules; trying again next round');
    }
    if (!stopped) timer = setTimeout(round, options.resyncSeconds * 1000);
  };
  timer = setTimeout(round, options.resyncSeconds * 1000);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** The pod networks given, or the node's own. */
async function podCidrs(source: PodCidrSource): Promise<readonly Cidr[]> {
  if (source.from === 'flag') return source.cidrs;
  return fetchPodCidrs(inClusterClient(source.node.api), source.node.name);
}

/** The pod events, or none, and the log says why once. */
function events(options: NodeOptions, log: Logger): SealEvents | undefined {
  if ('off' in options.events) {
    log.info(`no pod events (Sealed, NotSealed): ${options.events.off}`);
    return undefined;
  }
  const { name, api } = options.events.node;
  if (!existsSync(api.tokenFile)) {
    log.info(
      `no pod events (Sealed, NotSealed): no token at ${api.tokenFile} (automountServiceAccountToken: false?)`,
    );
    return undefined;
  }
  return sealEvents(inClusterClient(api), name, log);
}

async function run(argv: readonly string[]): Promise<void> {
  const options = parseNodeOptions(argv);
  const rules: Rules = { backend: options.backend, cidrs: await podCidrs(options.podCidrs) };
  if (options.mode !== 'run') {
    const run = options.mode === 'once' ? 'apply' : options.mode;
    process.stdout.write(await script(rules, run));
    return;
  }
  const log = createLogger(process.env.OSM_HEALTHCHECK_LOG_LEVEL ?? 'info');
  for (const line of (await script(rules, 'apply', log)).split('\n')) if (line !== '') log.info(line);
  const posted = events(options, log);
  const proofs = await serveProofs({
    host: options.listen,
    port: options.port,
    log,
    onSeen: posted?.proved,
  }).catch((err: Error) => {
    throw new HealthcheckError(
      'OSM_HC_NODE',
      `cannot listen for seal proofs on port ${options.port}: ${err.message}`,
      {
        cause: err,
      },
    );
  });
  const stopKeeping = keepRules(options, rules, log);
  log.info(
    {
      port: proofs.port,
      podCidrs: rules.cidrs.map((c) => c.text),
      podCidrsFrom: options.podCidrs.from === 'node' ? `node ${options.podCidrs.node.name}` : 'flag',
      resyncSeconds: options.resyncSeconds,
    },
    'node agent ready',
  );
  // `on`, not `once`: execa's exit hook re-raises a signal that no other listener is left to handle, and a
  // `once` listener is gone by the time that hook runs.
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'stopping; the node rules stay in place');
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  stopKeeping();
  await proofs.close();
  log.flush();
}

export const nodeCommand: Command = {
  name: 'node',
  usage,
  run,
};
