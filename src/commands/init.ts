// `osm-healthcheck init`: flags -> init/osm-healthcheck-init.sh, which lets kubelet's probes to 15901-15904
// and the companion's own probes of the app skip the mesh's proxy (docs/architecture.md#the-init-step). Runs in the pod's init
// container as root with NET_ADMIN.

import { type InitOptions, parseInitOptions, type SealRequest, scriptArgs } from '../init/options.js';
import { proveSeal } from '../init/proof.js';
import { runInitScript } from '../init/script.js';
import { writeSealOutputs } from '../init/seal-outputs.js';
import { COMPANION_UID } from '../scheme.js';
import { AGENT_PORT, PROOF_PORT, SEAL_SOURCES } from '../seal/sources.js';
import { describeVerdict, type ProofObservation, sealVerdict } from '../seal/verdict.js';
import type { Command } from './command.js';

const usage = `Usage: osm-healthcheck init [flags]

Makes the companion's traffic bypass the mesh sidecar, whichever init container runs first:
- inbound: nat chain OSM_HEALTHCHECK, jumped from the top of PREROUTING, ACCEPTs TCP to the companion's ports
  before the mesh's REDIRECT, so kubelet reaches the companion;
- outbound: nat chain OSM_HEALTHCHECK_OUTPUT, jumped from the top of OUTPUT, ACCEPTs TCP that the companion's
  user sends to the pod's own addresses, so its probes reach the app, not the mesh's outbound listener.
One iptables-restore --noflush transaction per IP family; running it again changes nothing. Needs root and
NET_ADMIN.

Flags:
  --ports LIST             ports and ranges that bypass the proxy (default 15901-15904), e.g. 15901-15904,16000
  --uid N                  the companion's user id (default ${COMPANION_UID}, the runAsUser inject gives it)
  --dry-run                print the exact iptables-restore input per family and change nothing
  --cleanup                remove our chains and their jumps (from every backend when --backend is auto)
  --ipv6 auto|on|off       auto (default): IPv6 too when the pod has a global IPv6 address
  --backend auto|nft|legacy
                           auto (default): the backend holding more rules (the mesh's), nft on a tie
  --seal-via ADDRESS       seal where the node agent proves it can: listen on ${PROOF_PORT} for a moment and ask the
                           agent at ADDRESS (the node's, status.hostIP) to connect; sealed when its connection
                           comes from ${SEAL_SOURCES.v4} or ${SEAL_SOURCES.v6}: then only that source
                           bypasses the mesh. Otherwise the open bypass stays. Either way the verdict is logged,
                           written to --seal-file and to the termination message.
  --agent-port PORT        the agent's port (default ${AGENT_PORT})
  --seal-file PATH         where the verdict goes for the companion (default /run/osm-healthcheck/seal)
  --help, --version`;

const PROOF_TIMEOUT_MS = 5_000;
const note = (line: string) => process.stderr.write(`${line}\n`);

async function observe(seal: SealRequest): Promise<ProofObservation> {
  if (seal.agentAddress === '') return { arrived: false, agentAnswer: 'the pod has no status.hostIP to ask' };
  return proveSeal({
    agentAddress: seal.agentAddress,
    agentPort: seal.agentPort,
    listenPort: PROOF_PORT,
    timeoutMs: PROOF_TIMEOUT_MS,
  });
}

/** Open first (a failed proof must leave today's bypass), the proof, then the verdict's rules, said everywhere. */
async function sealIfProved(options: InitOptions, seal: SealRequest): Promise<void> {
  // The open step's lines are notes: what stands at the end is the second step's.
  const opened = await runInitScript(scriptArgs(options, 'prove'), { onNote: note });
  for (const line of opened.split('\n'))
    if (line !== '') note(`osm-healthcheck-init: before the proof: ${line}`);
  const verdict = sealVerdict(await observe(seal));
  const step = verdict.sealed ? 'sealed' : 'open';
  process.stdout.write(await runInitScript(scriptArgs(options, step), { onNote: note }));
  process.stdout.write(`${describeVerdict(verdict)}\n`);
  for (const problem of await writeSealOutputs(verdict, seal.sealFile))
    note(`osm-healthcheck-init: ${problem}`);
}

async function run(argv: readonly string[]): Promise<void> {
  const options = parseInitOptions(argv);
  if (options.seal !== undefined) return sealIfProved(options, options.seal);
  const stdout = await runInitScript(scriptArgs(options), {
    onNote: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(stdout);
}

export const initCommand: Command = {
  name: 'init',
  usage,
  run,
};
