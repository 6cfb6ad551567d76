// What `init` refuses, through the built CLI inside a pod namespace that has the mesh's rules: not root, no
// NET_ADMIN, no iptables binary, no nat table, bad flags. Each: non-zero exit, one clear line, no rule changed.

import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stagedCli } from '../helpers/staged-cli.js';
import { LAB_READY, Lab, warnUnlessRoot } from './lab.js';

warnUnlessRoot('test/init/refusals.test.ts (init refusing to run)');

const NO_NAT = fileURLToPath(new URL('fixtures/no-nat', import.meta.url));

describe.skipIf(!LAB_READY)('init refuses, changing nothing', () => {
  // Staged where uid 65534 can read it, wherever the checkout is (test/helpers/staged-cli.ts).
  const cli = { path: stagedCli() };
  let lab: Lab;
  let original: string;
  // PATH directories for the init script: `sh` alone, and `sh` with iptables stubs for a kernel without nat.
  let bare: string;
  let noNat: string;

  beforeAll(async () => {
    lab = await Lab.create('ref');
    await lab.installMesh('nft');
    original = await lab.ruleset();
    const sh = (await execa('sh', ['-c', 'command -v sh'])).stdout;
    bare = mkdtempSync(join(tmpdir(), 'osm-hc-bare-'));
    noNat = mkdtempSync(join(tmpdir(), 'osm-hc-nonat-'));
    symlinkSync(sh, join(bare, 'sh'));
    symlinkSync(sh, join(noNat, 'sh'));
    for (const stub of ['iptables-legacy-save', 'iptables-legacy-restore']) {
      symlinkSync(join(NO_NAT, stub), join(noNat, stub));
    }
  });
  afterAll(async () => {
    await lab?.close();
    for (const dir of [bare, noNat]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    {
      name: 'not root',
      prefix: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'],
      args: [],
      exit: 1,
      line: 'must run as root (uid 0), running as uid 65534: give the init container securityContext.runAsUser: 0 [OSM_HC_INIT]',
    },
    {
      name: 'root without NET_ADMIN',
      prefix: ['setpriv', '--bounding-set=-net_admin', '--inh-caps=-net_admin'],
      args: [],
      exit: 1,
      line: "the NET_ADMIN capability is missing: add NET_ADMIN and NET_RAW to the init container's securityContext.capabilities [OSM_HC_INIT]",
    },
    {
      name: 'no iptables binary',
      path: () => bare,
      args: [],
      exit: 1,
      line: 'no iptables binary found (looked for iptables-nft-restore, iptables-legacy-restore, iptables-restore): install iptables in the init image [OSM_HC_INIT]',
    },
    {
      name: 'the chosen backend is not installed',
      path: () => noNat,
      args: ['--backend', 'nft'],
      exit: 1,
      line: 'the nft backend is not installed (no iptables-nft-restore or matching iptables-restore) [OSM_HC_INIT]',
    },
    {
      name: '--ipv6 on without ip6tables',
      path: () => noNat,
      args: ['--backend', 'legacy', '--ipv6', 'on'],
      exit: 1,
      line: '--ipv6 on: ip6tables-legacy-restore or ip6tables-legacy-save not found [OSM_HC_INIT]',
    },
    {
      name: 'no nat table in the kernel',
      path: () => noNat,
      args: ['--backend', 'legacy', '--ipv6', 'off'],
      exit: 1,
      line:
        'IPv4: iptables-legacy-restore refused the transaction, no IPv4 rule changed: the kernel offers no IPv4 nat ' +
        "table (iptable_nat/ip6table_nat or nft nat missing?): iptables-restore v1.8.9 (legacy): can't initialize " +
        "iptables table `nat': Table does not exist (do you need to insmod?) [OSM_HC_INIT]",
    },
    {
      name: 'port 0',
      args: ['--ports', '0'],
      exit: 2,
      line: '--ports "0" is not a port (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000) [OSM_HC_USAGE]',
    },
    {
      name: 'port 70000',
      args: ['--ports=70000'],
      exit: 2,
      line: '--ports "70000" is not a port (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000) [OSM_HC_USAGE]',
    },
    {
      name: 'ports a-b',
      args: ['--ports', 'a-b'],
      exit: 2,
      line: '--ports "a-b" is not a port or a range (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000) [OSM_HC_USAGE]',
    },
    {
      name: 'empty port list',
      args: ['--ports='],
      exit: 2,
      line: '--ports is empty (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000) [OSM_HC_USAGE]',
    },
    {
      name: '--uid 0 (root)',
      args: ['--uid', '0'],
      exit: 2,
      line: `--uid "0" is not accepted (a non-root user id 1-4294967294, the companion's runAsUser) [OSM_HC_USAGE]`,
    },
    {
      name: 'unknown flag',
      args: ['--force'],
      exit: 2,
      line: 'unknown flag --force (init takes --ports VALUE, --uid VALUE, --dry-run, --cleanup, --ipv6 VALUE, --backend VALUE, --seal-via VALUE, --agent-port VALUE, --seal-file VALUE, --help) [OSM_HC_USAGE]',
    },
  ])('$name', async ({ prefix = [], path, args, exit, line }) => {
    const env = path === undefined ? [] : ['env', `PATH=${path()}`];
    const result = await lab.init(cli.path, args, [...prefix, ...env]);
    expect(result.exitCode).toBe(exit);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`osm-healthcheck init: ${line}`);
    expect(await lab.ruleset()).toBe(original);
  });
});
