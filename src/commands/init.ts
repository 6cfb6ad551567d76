// `osm-healthcheck init`: flags -> init/osm-healthcheck-init.sh, which lets kubelet's probes to 15901-15904
// and the companion's own probes of the app skip the mesh's proxy (docs/architecture.md#the-init-step). Runs in the pod's init
// container as root with NET_ADMIN.

import { parseInitOptions, scriptArgs } from '../init/options.js';
import { runInitScript } from '../init/script.js';
import { COMPANION_UID } from '../scheme.js';
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
  --help, --version`;

async function run(argv: readonly string[]): Promise<void> {
  const options = parseInitOptions(argv);
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
