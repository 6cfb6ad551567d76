// init/nft-rules.sh, the pure half of the node agent's native nftables backend, called function by function
// through sh: the `nft -f` input it renders, our table read back from `nft list` as --ensure compares it, and
// the tables --cleanup and auto look for. test/init/node-nftables.test.ts runs the same against the real nft.

import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { SEAL_SOURCES } from '../../src/seal/sources.js';

const RULES = fileURLToPath(new URL('../../init/rules.sh', import.meta.url));
const NODE_RULES = fileURLToPath(new URL('../../init/node-rules.sh', import.meta.url));
const NFT_RULES = fileURLToPath(new URL('../../init/nft-rules.sh', import.meta.url));

async function call(fn: string, args: string[], input = '') {
  const result = await execa(
    'sh',
    ['-c', '. "$0" && . "$1" && . "$2" && shift 2 && "$@"', RULES, NODE_RULES, NFT_RULES, fn, ...args],
    { input, reject: false },
  );
  return { ok: result.exitCode === 0, out: result.stdout };
}

// `nft list table ip osm_healthcheck_node` as nft 1.0.6 (Debian 12, the image's) prints it, with -a's handles.
const LISTED = `table ip osm_healthcheck_node { # handle 5
\tchain postrouting { # handle 1
\t\ttype nat hook postrouting priority srcnat - 10; policy accept;
\t\tip daddr 10.88.0.0/16 tcp dport 15901-15904 meta skuid >= 0 snat to 169.254.7.127 # handle 2

\t}
}`;

// `nft list tables` on a node whose kube-proxy runs in nftables mode, with iptables-nft's tables and ours.
const TABLES = `table ip nat
table ip filter
table ip kube-proxy
table ip6 kube-proxy
table ip osm_healthcheck_node
table ip6 osm_healthcheck_nodes
table inet osm_healthcheck_node`;

describe('rendering our table', () => {
  it('render_nft_apply replaces in one transaction: the table added, deleted and declared anew', async () => {
    expect(
      (await call('render_nft_apply', ['IPv4', '15901:15904', '10.88.0.0/16', SEAL_SOURCES.v4])).out,
    ).toBe(
      [
        'add table ip osm_healthcheck_node',
        'delete table ip osm_healthcheck_node',
        'table ip osm_healthcheck_node {',
        '\tchain postrouting {',
        '\t\ttype nat hook postrouting priority srcnat - 10; policy accept;',
        '\t\tip daddr 10.88.0.0/16 tcp dport 15901-15904 meta skuid >= 0 snat to 169.254.7.127',
        '\t}',
        '}',
      ].join('\n'),
    );
  });

  it('IPv6 gets its own table, ip6 matches and its own source; one rule per network and port spec', async () => {
    const { out } = await call('render_nft_rules', [
      'IPv6',
      '15901:15904 16000',
      'fd00:88::/64 fd00:89::1/128',
      SEAL_SOURCES.v6,
    ]);
    expect(out.split('\n')).toEqual([
      `ip6 daddr fd00:88::/64 tcp dport 15901-15904 meta skuid >= 0 snat to ${SEAL_SOURCES.v6}`,
      `ip6 daddr fd00:88::/64 tcp dport 16000 meta skuid >= 0 snat to ${SEAL_SOURCES.v6}`,
      // A host route as nft lists it: no /128 (nor /32 for IPv4), so --ensure compares like with like.
      `ip6 daddr fd00:89::1 tcp dport 15901-15904 meta skuid >= 0 snat to ${SEAL_SOURCES.v6}`,
      `ip6 daddr fd00:89::1 tcp dport 16000 meta skuid >= 0 snat to ${SEAL_SOURCES.v6}`,
    ]);
  });

  it.each([
    { family: 'IPv4', cidr: '10.88.0.7/32', want: '10.88.0.7' },
    { family: 'IPv4', cidr: '0.0.0.0/0', want: '0.0.0.0/0' },
    { family: 'IPv6', cidr: '::/0', want: '::/0' },
    { family: 'IPv6', cidr: 'fd00::1/128', want: 'fd00::1' },
  ])('nft_address $family $cidr -> $want', async ({ family, cidr, want }) => {
    expect((await call('nft_address', [family, cidr])).out).toBe(want);
  });
});

describe('reading our table back (--ensure)', () => {
  it('our_nft_state drops indentation, handles and blank lines: what render_nft_state says must be there', async () => {
    const have = await call('our_nft_state', [], LISTED);
    const want = await call('render_nft_state', ['IPv4', '15901:15904', '10.88.0.0/16', SEAL_SOURCES.v4]);
    expect(have.out).toBe(want.out);
    expect(want.out.split('\n')).toEqual([
      'table ip osm_healthcheck_node {',
      'chain postrouting {',
      'type nat hook postrouting priority srcnat - 10; policy accept;',
      'ip daddr 10.88.0.0/16 tcp dport 15901-15904 meta skuid >= 0 snat to 169.254.7.127',
      '}',
      '}',
    ]);
  });

  it.each([
    {
      change: 'a rule another process added',
      listed: LISTED.replace('\n\n', '\n\t\tip daddr 10.0.0.1 accept\n'),
    },
    { change: 'our rule gone (the chain flushed)', listed: LISTED.replace(/\t\tip daddr.*\n/, '') },
    { change: 'another source', listed: LISTED.replace('169.254.7.127', '169.254.7.128') },
    { change: 'another priority', listed: LISTED.replace('srcnat - 10', 'srcnat') },
    { change: 'no table at all', listed: '' },
  ])('differs from what must be there with $change', async ({ listed }) => {
    const have = await call('our_nft_state', [], listed);
    const want = await call('render_nft_state', ['IPv4', '15901:15904', '10.88.0.0/16', SEAL_SOURCES.v4]);
    expect(have.out).not.toBe(want.out);
  });
});

describe('the tables cleanup and auto look for', () => {
  it.each([
    { family: 'IPv4', has: true },
    // `table ip6 osm_healthcheck_nodes` and `table inet osm_healthcheck_node` are someone else's.
    { family: 'IPv6', has: false },
  ])('has_nft_table $family: $has', async ({ family, has }) => {
    expect((await call('has_nft_table', [family], TABLES)).ok).toBe(has);
  });

  it('render_nft_cleanup deletes exactly our table of the family, and nothing when it is not there', async () => {
    expect((await call('render_nft_cleanup', ['IPv6', '1'])).out).toBe(
      'delete table ip6 osm_healthcheck_node',
    );
    expect(await call('render_nft_cleanup', ['IPv4', '0'])).toEqual({ ok: true, out: '' });
  });

  it("kube_proxy_nft_tables counts kube-proxy's nftables-mode tables, both families", async () => {
    expect((await call('kube_proxy_nft_tables', [], TABLES)).out).toBe('2');
    expect((await call('kube_proxy_nft_tables', [], 'table ip nat\ntable inet kube-proxyx')).out).toBe('0');
  });
});
