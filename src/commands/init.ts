// `osm-healthcheck init`: flags -> init/osm-healthcheck-init.sh, which lets kubelet's probes to 15901-15904 skip
// the mesh's proxy (DESIGN.md §6). Runs in the pod's init container as root with NET_ADMIN.

import { parseInitOptions, scriptArgs } from '../init/options.js';
import { runInitScript } from '../init/script.js';
import type { Command } from './command.js';

const usage = `Usage: osm-healthcheck init [flags]

Makes TCP to the companion's ports bypass the mesh sidecar: a nat chain OSM_HEALTHCHECK, jumped from the top of
PREROUTING, ACCEPTs them before the mesh's REDIRECT, whichever init container runs first. One
iptables-restore --noflush transaction per IP family; running it again changes nothing. Needs root and NET_ADMIN.

Flags:
  --ports LIST             ports and ranges that bypass the proxy (default 15901-15904), e.g. 15901-15904,16000
  --dry-run                print the exact iptables-restore input per family and change nothing
  --cleanup                remove our chain and its jump (from every backend when --backend is auto)
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
  summary: 'make ports 15901-15904 bypass the mesh proxy (iptables; init container, root + NET_ADMIN)',
  usage,
  run,
};
