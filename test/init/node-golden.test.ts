// The rendered rules, golden: the node agent's SNAT and the sealed pod's bypass (and the proof's step), for both
// IP families, as each iptables backend's dry run prints them, and the agent's native nftables input
// (node.nftables.golden), from an empty ruleset in a scratch network namespace. UPDATE_GOLDEN=1 npx vitest run test/init/node-golden.test.ts rewrites the expected files.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../helpers/cli.js';
import { type Backend, backendWorks, LAB_READY, nftablesReady, warnUnlessRoot } from './lab.js';

warnUnlessRoot('test/init/node-golden.test.ts (dry runs in a network namespace)');

const GOLDEN = new URL('golden/', import.meta.url);
const INIT_SCRIPT = fileURLToPath(new URL('../../init/osm-healthcheck-init.sh', import.meta.url));

const CASES: { name: string; argv: (backend: Backend) => string[] }[] = [
  {
    name: 'node',
    argv: (backend) => [
      process.execPath,
      CLI,
      'node',
      '--dry-run',
      '--pod-cidr',
      '10.88.0.0/16,fd00:88::/64',
      '--backend',
      backend,
    ],
  },
  {
    name: 'pod-sealed',
    argv: (backend) => ['sh', INIT_SCRIPT, '--dry-run', '--sealed', '--ipv6', 'on', '--backend', backend],
  },
  {
    name: 'pod-proof',
    argv: (backend) => [
      'sh',
      INIT_SCRIPT,
      '--dry-run',
      '--ipv6',
      'on',
      '--backend',
      backend,
      '--agent',
      '10.88.0.1',
      '--agent-port',
      '15910',
    ],
  },
];

const WORKS = {
  nft: LAB_READY && (await backendWorks('nft')),
  legacy: LAB_READY && (await backendWorks('legacy')),
};

describe.each((['nft', 'legacy'] as const).filter((backend) => WORKS[backend]))('iptables-%s', (backend) => {
  const ns = `ohc-${process.pid}-golden-${backend}`;
  beforeAll(async () => {
    await execa('ip', ['netns', 'del', ns], { reject: false });
    await execa('ip', ['netns', 'add', ns]);
  });
  afterAll(async () => {
    await execa('ip', ['netns', 'del', ns], { reject: false });
  });

  it('the node script applies them, --ensure finds them in place or puts them back, --cleanup restores the ruleset', async () => {
    const run = (...args: string[]) =>
      execa('ip', ['netns', 'exec', ns, process.execPath, CLI, 'node', '--backend', backend, ...args], {
        reject: false,
      });
    const save = async () =>
      (await execa('ip', ['netns', 'exec', ns, `iptables-${backend}-save`, '-t', 'nat'])).stdout
        .split('\n')
        .filter((line) => !line.startsWith('#'))
        .join('\n');
    const before = await save();
    const cidrs = ['--pod-cidr', '10.88.0.0/16,fd00:88::/64'];
    expect((await run(...cidrs, '--once')).exitCode).toBe(0);
    const applied = await save();
    expect(applied).toContain('-A POSTROUTING -p tcp -j OSM_HEALTHCHECK_NODE');
    // An agent that restarts finds its rules in place and changes nothing.
    const again = await run(...cidrs, '--once');
    expect(again.exitCode, again.stderr).toBe(0);
    expect(await save()).toBe(applied);
    // Another process flushes nat POSTROUTING: the next round puts the jump back, once.
    await execa('ip', ['netns', 'exec', ns, `iptables-${backend}`, '-t', 'nat', '-F', 'POSTROUTING']);
    const ensure = await execa(
      'ip',
      [
        'netns',
        'exec',
        ns,
        'sh',
        `${ROOT}init/osm-healthcheck-node.sh`,
        ...cidrs,
        '--backend',
        backend,
        '--ensure',
      ],
      { reject: false },
    );
    expect(ensure.stdout).toContain(`IPv4: restored: the host's TCP to 15901-15904 of pods in 10.88.0.0/16`);
    expect(ensure.stdout).toContain(`IPv6: in place (ip6tables-${backend})`);
    expect(await save()).toBe(applied);
    expect((await run('--cleanup')).exitCode).toBe(0);
    expect(await save()).toBe(before);
  });

  it.each(CASES)('$name', async ({ name, argv }) => {
    const result = await execa('ip', ['netns', 'exec', ns, ...argv(backend)], { reject: false });
    expect(result.exitCode, result.stderr).toBe(0);
    const file = new URL(`${name}.${backend}.golden`, GOLDEN);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, `${result.stdout}\n`);
    expect(`${result.stdout}\n`).toBe(readFileSync(file, 'utf8'));
  });
});

const NFTABLES = await nftablesReady('the native nftables cases of test/init/node-golden.test.ts');

describe.skipIf(!NFTABLES)('native nftables', () => {
  const ns = `ohc-${process.pid}-golden-nftables`;
  beforeAll(async () => {
    await execa('ip', ['netns', 'del', ns], { reject: false });
    await execa('ip', ['netns', 'add', ns]);
  });
  afterAll(async () => {
    await execa('ip', ['netns', 'del', ns], { reject: false });
  });
  const node = (...args: string[]) =>
    execa('ip', ['netns', 'exec', ns, process.execPath, CLI, 'node', ...args], { reject: false });

  it('node --dry-run --backend nftables: one table per family, IPv4 and IPv6', async () => {
    const result = await node(
      '--dry-run',
      '--pod-cidr',
      '10.88.0.0/16,fd00:88::/64',
      '--backend',
      'nftables',
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const file = new URL('node.nftables.golden', GOLDEN);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, `${result.stdout}\n`);
    expect(`${result.stdout}\n`).toBe(readFileSync(file, 'utf8'));
    // The dry run changes nothing.
    expect((await execa('ip', ['netns', 'exec', ns, 'nft', 'list', 'ruleset'])).stdout).toBe('');
  });

  it('what the dry run prints is what nft holds once applied', async () => {
    const cidrs = ['--pod-cidr', '10.88.0.0/16,fd00:88::/64', '--backend', 'nftables'];
    expect((await node(...cidrs, '--once')).exitCode).toBe(0);
    const listed = (await execa('ip', ['netns', 'exec', ns, 'nft', 'list', 'ruleset'])).stdout;
    const declared = readFileSync(new URL('node.nftables.golden', GOLDEN), 'utf8')
      .split('\n')
      .filter((line) => !/^(#|add table|delete table)/.test(line) && line !== '')
      .join('\n');
    expect(listed).toBe(declared);
  });

  it.skipIf(!WORKS.nft)(
    "auto writes with nftables where kube-proxy's nftables tables are and its iptables rules are not",
    async () => {
      const auto = async () => {
        const result = await node('--dry-run', '--pod-cidr', '10.88.0.0/16');
        expect(result.exitCode, result.stderr).toBe(0);
        return { header: result.stdout.split('\n')[0], note: result.stderr };
      };
      const sh = (script: string) => execa('ip', ['netns', 'exec', ns, 'sh', '-ec', script]);
      expect((await auto()).header).toBe('# IPv4: iptables-nft-restore --noflush');
      await sh('nft add table ip kube-proxy');
      expect(await auto()).toEqual({
        header: '# IPv4: nft -f -',
        note: 'osm-healthcheck-node: backend nftables (auto: nft holds 0 rules, legacy 0; kube-proxy has 1 nftables tables, 0 iptables rules)',
      });
      // kube-proxy's iptables mode left behind (or running beside): iptables, as before.
      await sh('iptables-nft -t nat -N KUBE-SERVICES; iptables-nft -t nat -A PREROUTING -j KUBE-SERVICES');
      expect((await auto()).header).toBe('# IPv4: iptables-nft-restore --noflush');
    },
    // Three runs of the CLI, each reading both iptables backends: seconds apiece on a loaded machine.
    60_000,
  );
});
