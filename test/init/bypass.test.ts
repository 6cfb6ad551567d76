// The bypass, proven with real packets: a node and a pod namespace, osm-edge's interception in the pod, and
// `osm-healthcheck init` from the built CLI. For both iptables backends and both orders of the two init
// containers, over IPv4 and IPv6: 15901-15904 reach the companion, every other port still the proxy, a re-run
// changes nothing, --dry-run changes nothing, --cleanup leaves exactly the ruleset it found.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, type CliBundle } from './cli-bundle.js';
import { type Backend, backendWorks, IS_ROOT, Lab, POD, warnUnlessRoot } from './lab.js';

warnUnlessRoot('test/init/bypass.test.ts (init in network namespaces)');

const TARGETS = [
  [POD.v4, 15901],
  [POD.v4, 15904],
  [POD.v4, 8080],
  [POD.v6, 15901],
  [POD.v6, 15904],
  [POD.v6, 8080],
] as const;
const ALL_PROXY = ['PROXY', 'PROXY', 'PROXY', 'PROXY', 'PROXY', 'PROXY'];
const BYPASSED = ['COMPANION', 'COMPANION', 'PROXY', 'COMPANION', 'COMPANION', 'PROXY'];

const SCENARIOS: { name: string; tag: string; backend: Backend; meshFirst: boolean }[] = [
  { name: 'nft, mesh rules installed before ours', tag: 'nb', backend: 'nft', meshFirst: true },
  { name: 'nft, mesh rules installed after ours', tag: 'na', backend: 'nft', meshFirst: false },
  { name: 'legacy, mesh rules installed before ours', tag: 'lb', backend: 'legacy', meshFirst: true },
  { name: 'legacy, mesh rules installed after ours', tag: 'la', backend: 'legacy', meshFirst: false },
];

const WORKS = {
  nft: IS_ROOT && (await backendWorks('nft')),
  legacy: IS_ROOT && (await backendWorks('legacy')),
};

describe.skipIf(!IS_ROOT)('init in network namespaces', () => {
  let cli: CliBundle;
  beforeAll(async () => {
    cli = await bundleCli();
  });
  afterAll(() => cli?.remove());

  describe.each(SCENARIOS.filter((s) => WORKS[s.backend]))('$name', ({ tag, backend, meshFirst }) => {
    let lab: Lab;
    let original: string;
    // With the mesh first, auto detection must find its backend; with ours first there is nothing to detect
    // yet, so the legacy case names its backend as an operator would.
    const backendFlag = meshFirst || backend === 'nft' ? [] : ['--backend', backend];

    beforeAll(async () => {
      lab = await Lab.create(tag);
      await lab.startListeners();
      if (meshFirst) await lab.installMesh(backend);
      original = await lab.ruleset();
    });
    afterAll(async () => {
      await lab?.close();
    });

    it(
      meshFirst
        ? 'before init, 15901 and 15904 land in the proxy like every port'
        : 'before either init container, nothing is intercepted',
      async () => {
        const answers = await lab.dial(TARGETS);
        if (meshFirst) expect(answers).toEqual(ALL_PROXY);
        else expect(answers).toEqual(BYPASSED.map((a) => (a === 'PROXY' ? 'error ECONNREFUSED' : a)));
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
            '-A OSM_HEALTHCHECK -p tcp -m tcp --dport 15901:15904 -j ACCEPT',
            '-I PREROUTING 1 -p tcp -j OSM_HEALTHCHECK',
            'COMMIT',
          ].join('\n'),
        );
      }
      expect(await lab.ruleset()).toBe(original);
    });

    it('init: 15901-15904 reach the companion, other ports still the proxy (IPv4 and IPv6)', async () => {
      const result = await lab.init(cli.path, backendFlag);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('IPv4: TCP to 15901-15904 bypasses the mesh');
      expect(result.stdout).toContain('IPv6: TCP to 15901-15904 bypasses the mesh');
      if (!meshFirst) await lab.installMesh(backend);
      expect(await lab.dial(TARGETS)).toEqual(BYPASSED);
    });

    it('init twice leaves iptables-save identical', async () => {
      const once = await lab.ruleset();
      const again = await lab.init(cli.path, backendFlag);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(await lab.ruleset()).toBe(once);
      expect(once.match(/-A PREROUTING -p tcp -j OSM_HEALTHCHECK/g)).toHaveLength(2);
      expect(await lab.dial(TARGETS)).toEqual(BYPASSED);
    });

    it('our jump stays first in PREROUTING, ahead of the mesh', async () => {
      const nat = await lab.run(lab.pod, [`iptables-${backend}`, '-t', 'nat', '-S', 'PREROUTING']);
      expect(nat.stdout.split('\n').filter((l) => l.startsWith('-A'))).toEqual([
        '-A PREROUTING -p tcp -j OSM_HEALTHCHECK',
        '-A PREROUTING -p tcp -j PROXY_INBOUND',
      ]);
    });

    it('--cleanup restores the ruleset exactly, and the mesh intercepts everything again', async () => {
      const expected = meshFirst ? original : await lab.meshOnlyRuleset(backend);
      const result = await lab.init(cli.path, ['--cleanup']);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('IPv4: removed chain OSM_HEALTHCHECK and its PREROUTING jump');
      expect(await lab.ruleset()).toBe(expected);
      expect(await lab.dial(TARGETS)).toEqual(ALL_PROXY);
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
