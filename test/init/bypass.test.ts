// The bypass, proven with real packets: a node and a pod namespace, osm-edge's interception in the pod
// (inbound and outbound), and `osm-healthcheck init` from the built CLI. For both iptables backends and both
// orders of the two init containers, over IPv4 and IPv6: 15901-15904 reach the companion, every other port
// still the proxy; the companion's user reaches the app at the pod's own addresses, other users and other
// hosts still the outbound proxy; a re-run and --dry-run change nothing; --cleanup leaves exactly the ruleset
// it found.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPANION_UID } from '../../src/scheme.js';
import { CLI } from '../helpers/cli.js';
import { APP_PORT, type Backend, backendWorks, LAB_READY, Lab, NODE, POD, warnUnlessRoot } from './lab.js';

warnUnlessRoot('test/init/bypass.test.ts (init in network namespaces)');

// Inbound, dialled from the node namespace as kubelet does.
const TARGETS = [
  [POD.v4, 15901],
  [POD.v4, 15904],
  [POD.v4, APP_PORT],
  [POD.v6, 15901],
  [POD.v6, 15904],
  [POD.v6, APP_PORT],
] as const;
const ALL_PROXY = ['PROXY', 'PROXY', 'PROXY', 'PROXY', 'PROXY', 'PROXY'];
const BYPASSED = ['COMPANION', 'COMPANION', 'PROXY', 'COMPANION', 'COMPANION', 'PROXY'];
const UNMESHED = ['COMPANION', 'COMPANION', 'APP', 'COMPANION', 'COMPANION', 'APP'];

// Outbound, dialled inside the pod as the companion probes the app: the pod's IPs, loopback, and (what the
// companion never dials) another host.
const APP_TARGETS = [
  [POD.v4, APP_PORT],
  [POD.v6, APP_PORT],
  ['127.0.0.1', APP_PORT],
  ['::1', APP_PORT],
  [NODE.v4, APP_PORT],
  [NODE.v6, APP_PORT],
] as const;
/** What the mesh does to any user but its proxy's: only loopback escapes its REDIRECT. */
const MESHED_OUT = ['OUTBOUND', 'OUTBOUND', 'APP', 'APP', 'OUTBOUND', 'OUTBOUND'];
const COMPANION_OUT = ['APP', 'APP', 'APP', 'APP', 'OUTBOUND', 'OUTBOUND'];
const UNMESHED_OUT = ['APP', 'APP', 'APP', 'APP', 'error ECONNREFUSED', 'error ECONNREFUSED'];
/** Any user but the companion's, e.g. the app's own. */
const OTHER_UID = 1000;

const SCENARIOS: { name: string; tag: string; backend: Backend; meshFirst: boolean }[] = [
  { name: 'nft, mesh rules installed before ours', tag: 'nb', backend: 'nft', meshFirst: true },
  { name: 'nft, mesh rules installed after ours', tag: 'na', backend: 'nft', meshFirst: false },
  { name: 'legacy, mesh rules installed before ours', tag: 'lb', backend: 'legacy', meshFirst: true },
  { name: 'legacy, mesh rules installed after ours', tag: 'la', backend: 'legacy', meshFirst: false },
];

const WORKS = {
  nft: LAB_READY && (await backendWorks('nft')),
  legacy: LAB_READY && (await backendWorks('legacy')),
};

describe.skipIf(!LAB_READY)('init in network namespaces', () => {
  // The CLI as shipped: vitest's global setup builds dist/cli.mjs from the current sources.
  const cli = { path: CLI };

  describe.each(SCENARIOS.filter((s) => WORKS[s.backend]))('$name', ({ tag, backend, meshFirst }) => {
    let lab: Lab;
    let original: string;
    // With the mesh first, auto detection must find its backend; with ours first there is nothing to detect
    // yet, so the legacy case names its backend as an operator would.
    const backendFlag = meshFirst || backend === 'nft' ? [] : ['--backend', backend];
    const installMesh = async () => {
      await lab.installMesh(backend);
      await lab.installMeshOutbound(backend);
    };

    beforeAll(async () => {
      lab = await Lab.create(tag);
      await lab.startListeners();
      await lab.startOutboundListeners();
      if (meshFirst) await installMesh();
      original = await lab.ruleset();
    });
    afterAll(async () => {
      await lab?.close();
    });

    it(
      meshFirst
        ? "before init, 15901 and 15904 land in the proxy, and so do the companion's probes of the app"
        : 'before either init container, nothing is intercepted',
      async () => {
        expect(await lab.dial(TARGETS)).toEqual(meshFirst ? ALL_PROXY : UNMESHED);
        expect(await lab.dialAs(COMPANION_UID, APP_TARGETS)).toEqual(meshFirst ? MESHED_OUT : UNMESHED_OUT);
      },
    );

    it('--dry-run prints the transaction for both families and changes nothing', async () => {
      const result = await lab.init(cli.path, ['--dry-run', ...backendFlag]);
      expect(result.exitCode, result.stderr).toBe(0);
      const header = (family: string) =>
        `# ${family}: ${family === 'IPv4' ? 'ip' : 'ip6'}tables-${backend}-restore`;
      for (const family of ['IPv4', 'IPv6']) {
        expect(result.stdout).toContain(
          [
            `${header(family)} --noflush`,
            '*nat',
            ':OSM_HEALTHCHECK - [0:0]',
            ':OSM_HEALTHCHECK_OUTPUT - [0:0]',
            '-A OSM_HEALTHCHECK -p tcp -m tcp --dport 15901:15904 -j ACCEPT',
            `-A OSM_HEALTHCHECK_OUTPUT -o lo -p tcp -m owner --uid-owner ${COMPANION_UID} -j ACCEPT`,
            '-I PREROUTING 1 -p tcp -j OSM_HEALTHCHECK',
            '-I OUTPUT 1 -p tcp -j OSM_HEALTHCHECK_OUTPUT',
            'COMMIT',
          ].join('\n'),
        );
      }
      expect(await lab.ruleset()).toBe(original);
    });

    it('init: 15901-15904 reach the companion, other ports still the proxy (IPv4 and IPv6)', async () => {
      const result = await lab.init(cli.path, backendFlag);
      expect(result.exitCode, result.stderr).toBe(0);
      for (const family of ['IPv4', 'IPv6']) {
        expect(result.stdout).toContain(`${family}: TCP to 15901-15904 bypasses the mesh`);
        expect(result.stdout).toContain(
          `${family}: TCP from uid ${COMPANION_UID} to the pod's own addresses bypasses the mesh`,
        );
      }
      if (!meshFirst) await installMesh();
      expect(await lab.dial(TARGETS)).toEqual(BYPASSED);
    });

    it.each([
      {
        name: "the companion's user reaches the app at the pod's addresses, another host still the proxy",
        uid: COMPANION_UID,
        want: COMPANION_OUT,
      },
      {
        name: 'any other user (the app) still lands in the outbound proxy',
        uid: OTHER_UID,
        want: MESHED_OUT,
      },
    ])('init: $name (IPv4 and IPv6)', async ({ uid, want }) => {
      expect(await lab.dialAs(uid, APP_TARGETS)).toEqual(want);
    });

    it('init twice leaves iptables-save identical', async () => {
      const once = await lab.ruleset();
      const again = await lab.init(cli.path, backendFlag);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(await lab.ruleset()).toBe(once);
      expect(once.match(/-A PREROUTING -p tcp -j OSM_HEALTHCHECK\n/g)).toHaveLength(2);
      expect(once.match(/-A OUTPUT -p tcp -j OSM_HEALTHCHECK_OUTPUT\n/g)).toHaveLength(2);
      expect(await lab.dial(TARGETS)).toEqual(BYPASSED);
      expect(await lab.dialAs(COMPANION_UID, APP_TARGETS)).toEqual(COMPANION_OUT);
    });

    it.each([
      { chain: 'PREROUTING', ours: 'OSM_HEALTHCHECK', mesh: 'PROXY_INBOUND' },
      { chain: 'OUTPUT', ours: 'OSM_HEALTHCHECK_OUTPUT', mesh: 'PROXY_OUTPUT' },
    ])('our jump stays first in $chain, ahead of the mesh', async ({ chain, ours, mesh }) => {
      for (const tool of ['iptables', 'ip6tables']) {
        const nat = await lab.run(lab.pod, [`${tool}-${backend}`, '-t', 'nat', '-S', chain]);
        expect(nat.stdout.split('\n').filter((l) => l.startsWith('-A'))).toEqual([
          `-A ${chain} -p tcp -j ${ours}`,
          `-A ${chain} -p tcp -j ${mesh}`,
        ]);
      }
    });

    it('--cleanup restores the ruleset exactly, and the mesh intercepts everything again', async () => {
      const expected = meshFirst ? original : await lab.meshOnlyRuleset(backend, true);
      const result = await lab.init(cli.path, ['--cleanup']);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        'IPv4: removed nat chains OSM_HEALTHCHECK, OSM_HEALTHCHECK_OUTPUT and our jumps',
      );
      expect(await lab.ruleset()).toBe(expected);
      expect(await lab.dial(TARGETS)).toEqual(ALL_PROXY);
      expect(await lab.dialAs(COMPANION_UID, APP_TARGETS)).toEqual(MESHED_OUT);
    });

    it('--cleanup again has nothing to remove', async () => {
      const before = await lab.ruleset();
      const result = await lab.init(cli.path, ['--cleanup']);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).not.toContain('removed');
      expect(await lab.ruleset()).toBe(before);
    });
  });
});
