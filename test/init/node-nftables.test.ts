// The node agent's native nftables backend (`node --backend nftables`) with real packets, in network namespaces
// made here (node-lab.ts: a node with a bridge and two pods on it): the host's own connection to a pod's 15904
// arrives from the seal source, IPv4 and IPv6, even with another process's SNAT at srcnat (ours runs first),
// and one to another port as before; another pod's connection, which the node forwards through the same
// postrouting hook (a foreign table's counter sees it), keeps its own source. Both fail when broken (tried:
// without the rule's socket match the forwarded connection is SNATed; with our chain after srcnat the foreign
// SNAT wins). A table another process flushed or deleted is put back by the running agent, which logs
// `restored`; stopping the agent leaves the tables; re-running never duplicates; --cleanup (no backend: every
// backend) removes exactly our two tables and leaves the foreign ones as they were.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEAL_SOURCES } from '../../src/seal/sources.js';
import type { Running } from '../e2e/processes.js';
import { CLI, ROOT } from '../helpers/cli.js';
import { nftablesReady, warnUnlessRoot } from './lab.js';
import { BRIDGE, NodeLab, OTHER_POD, POD_CIDRS, SEALED_POD } from './node-lab.js';

warnUnlessRoot('test/init/node-nftables.test.ts (the native nftables backend in network namespaces)');

const READY = await nftablesReady('test/init/node-nftables.test.ts');

/** A port outside 15901-15904, where the host's connections must keep the node's own address. */
const OTHER_PORT = 8080;

// Answers each connection with the source address it came from, one line.
const WHO = `
const net = require('node:net');
const ports = JSON.parse(process.argv[1]);
let pending = ports.length;
for (const port of ports) {
  net.createServer((s) => { s.on('error', () => {}); s.end(s.remoteAddress.replace(/^::ffff:/, '') + '\\n'); })
    .listen({ port, host: '::' }, () => { if (--pending === 0) process.stdout.write('ready\\n'); });
}`;

// Another process's table in the node's namespace: a filter chain in postrouting, ahead of every nat chain, that
// counts the other pod's SYNs to 15904 (proving the forwarded connection passed the hook our chain is on).
const FOREIGN = `table inet foreign_watch {
\tchain postrouting {
\t\ttype filter hook postrouting priority srcnat - 50; policy accept;
\t\tip saddr ${OTHER_POD.v4} tcp dport 15904 tcp flags syn counter
\t\tip6 saddr ${OTHER_POD.v6} tcp dport 15904 tcp flags syn counter
\t}
}`;

// Another process's source NAT at srcnat, as kube-proxy's masquerade or a CNI's sits there: the host's own IPv4 TCP
// to the pods leaves from another node address. Ours, at srcnat - 10, must decide first.
const FOREIGN_SNAT = '10.253.0.254';
const FOREIGN_NAT = `table ip foreign_nat {
\tchain postrouting {
\t\ttype nat hook postrouting priority srcnat; policy accept;
\t\tip saddr ${BRIDGE.v4} ip daddr 10.253.0.0/24 snat to ${FOREIGN_SNAT}
\t}
}`;

/** Each case runs the CLI or waits for the agent's round: seconds apiece on a loaded 2-core machine. */
const SLOW = 90_000;

const OURS = ['table ip osm_healthcheck_node', 'table ip6 osm_healthcheck_node'];

describe.skipIf(!READY)('the node agent with native nftables, in network namespaces', () => {
  let lab: NodeLab;
  let agent: Running | undefined;

  const nft = async (...args: string[]) => {
    const result = await lab.run(lab.node, ['nft', ...args]);
    expect(result.exitCode, result.stderr).toBe(0);
    return result.stdout;
  };
  /** The ruleset, table by table in a fixed order: a table made anew is listed last. */
  const ruleset = async () =>
    (await nft('list', 'ruleset'))
      .split(/\n(?=table )/)
      .sort()
      .join('\n');
  const tables = async () => (await nft('list', 'tables')).split('\n').filter((l) => l !== '');
  const node = (...args: string[]) => lab.run(lab.node, [process.execPath, CLI, 'node', ...args]);
  const fromNode = (port: number) =>
    lab.dial(lab.node, [
      [SEALED_POD.v4, port],
      [SEALED_POD.v6, port],
    ]);
  const syns = async () =>
    [...(await nft('list', 'table', 'inet', 'foreign_watch')).matchAll(/counter packets (\d+)/g)].map((m) =>
      Number(m[1]),
    );

  beforeAll(async () => {
    lab = await NodeLab.create('nftables');
    const who = lab.procs.start('who', lab.pod, [
      process.execPath,
      '-e',
      WHO,
      JSON.stringify([15904, OTHER_PORT]),
    ]);
    await who.waitFor((line) => line === 'ready', 10_000);
    const address = await lab.run(lab.node, ['ip', 'addr', 'add', `${FOREIGN_SNAT}/24`, 'dev', 'br0']);
    expect(address.exitCode, address.stderr).toBe(0);
    for (const table of [FOREIGN, FOREIGN_NAT]) {
      const foreign = await lab.run(lab.node, ['sh', '-c', 'printf "%s\\n" "$0" | nft -f -', table]);
      expect(foreign.exitCode, foreign.stderr).toBe(0);
    }
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
  });

  it(
    "without the agent, the host's connections leave from the foreign SNAT's address, or the node's (the control)",
    async () => {
      expect(await fromNode(15904)).toEqual([FOREIGN_SNAT, BRIDGE.v6]);
    },
    SLOW,
  );

  it(
    "the agent's table: the host's TCP to a pod's 15904 arrives from the seal source, to another port from the node",
    async () => {
      agent = lab.procs.start('node agent', lab.node, [
        process.execPath,
        CLI,
        'node',
        '--backend',
        'nftables',
        '--pod-cidr',
        POD_CIDRS,
        '--resync',
        '1',
      ]);
      await agent.waitFor((line) => line.includes('node agent ready'), 30_000);
      expect(agent.lines.join('\n')).toContain(
        `IPv4: the host's TCP to 15901-15904 of pods in 10.253.0.0/24 leaves from ${SEAL_SOURCES.v4} (nftables table ip osm_healthcheck_node`,
      );
      expect(await tables()).toEqual(expect.arrayContaining(OURS));
      expect(await fromNode(15904)).toEqual([SEAL_SOURCES.v4, SEAL_SOURCES.v6]);
      expect(await fromNode(OTHER_PORT)).toEqual([FOREIGN_SNAT, BRIDGE.v6]);
    },
    SLOW,
  );

  it(
    "another pod's connection, forwarded through the same hook, keeps its own source: no local socket sent it",
    async () => {
      const before = await syns();
      expect(
        await lab.dial(lab.other, [
          [SEALED_POD.v4, 15904],
          [SEALED_POD.v6, 15904],
        ]),
      ).toEqual([OTHER_POD.v4, OTHER_POD.v6]);
      const after = await syns();
      // Each family's SYN passed the node's postrouting, where our chain runs right after the foreign one.
      expect(after.map((n, i) => n - (before[i] ?? 0))).toEqual([1, 1]);
    },
    SLOW,
  );

  it(
    'puts back a table another process flushed, or deleted, and logs it',
    async () => {
      const want = await nft('list', 'table', 'ip', 'osm_healthcheck_node');
      const restoredBefore = agent?.lines.filter((l) => l.includes('restored')).length ?? 0;
      await nft('flush', 'table', 'ip', 'osm_healthcheck_node');
      await agent?.waitFor(
        (line) =>
          line.includes('"level":"warn"') &&
          line.includes('IPv4: restored') &&
          line.includes('nftables table ip '),
        30_000,
      );
      expect(await nft('list', 'table', 'ip', 'osm_healthcheck_node')).toBe(want);
      await nft('delete', 'table', 'ip6', 'osm_healthcheck_node');
      await agent?.waitFor((line) => line.includes('IPv6: restored'), 30_000);
      expect(agent?.lines.filter((l) => l.includes('restored')).length).toBe(restoredBefore + 2);
      expect(await fromNode(15904)).toEqual([SEAL_SOURCES.v4, SEAL_SOURCES.v6]);
    },
    SLOW,
  );

  it(
    'stopping the agent leaves the tables; a re-run replaces, never duplicates',
    async () => {
      const before = await ruleset();
      agent?.child.kill('SIGTERM');
      expect(await agent?.exited).toBe(0);
      agent = undefined;
      expect(await ruleset()).toBe(before);
      for (let i = 0; i < 2; i++) {
        const again = await node('--backend', 'nftables', '--pod-cidr', POD_CIDRS, '--once');
        expect(again.exitCode, again.stderr).toBe(0);
      }
      expect(await ruleset()).toBe(before);
      const ensure = await lab.run(lab.node, [
        'sh',
        `${ROOT}init/osm-healthcheck-node.sh`,
        '--pod-cidr',
        POD_CIDRS,
        '--backend',
        'nftables',
        '--ensure',
      ]);
      expect(ensure.stdout).toBe(
        'IPv4: in place (nftables table ip osm_healthcheck_node)\nIPv6: in place (nftables table ip6 osm_healthcheck_node)',
      );
    },
    SLOW,
  );

  it(
    '--cleanup without a backend removes exactly our tables, and leaves the foreign ones as they were',
    async () => {
      const before = await tables();
      const foreign = await nft('list', 'table', 'ip', 'foreign_nat');
      const cleanup = await node('--cleanup');
      expect(cleanup.exitCode, cleanup.stderr).toBe(0);
      expect(cleanup.stdout).toContain('IPv4: removed nftables table ip osm_healthcheck_node');
      expect(cleanup.stdout).toContain('IPv6: removed nftables table ip6 osm_healthcheck_node');
      expect(await tables()).toEqual(before.filter((t) => !OURS.includes(t)));
      expect(await nft('list', 'table', 'ip', 'foreign_nat')).toBe(foreign);
      expect(await fromNode(15904)).toEqual([FOREIGN_SNAT, BRIDGE.v6]);
      const again = await node('--cleanup', '--backend', 'nftables');
      expect(again.stdout).toBe('IPv4: nothing to remove (nftables)\nIPv6: nothing to remove (nftables)');
    },
    SLOW,
  );
});
