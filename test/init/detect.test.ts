// Backend detection against real rules in a namespace: `init --backend auto` writes with the backend whose
// tables hold more rules (the mesh's), nft when neither has any or on a tie; --backend overrides it.

import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { type Backend, backendWorks, LAB_READY, Lab, warnUnlessRoot } from './lab.js';

warnUnlessRoot('test/init/detect.test.ts (iptables backend detection)');

/** Two filter rules written with `backend`: noise in another table, which the count includes. */
async function addFilterRules(lab: Lab, backend: Backend): Promise<void> {
  for (const port of [9, 13]) {
    const args = ['-t', 'filter', '-A', 'INPUT', '-p', 'tcp', '--dport', `${port}`, '-j', 'ACCEPT'];
    await execa('ip', ['netns', 'exec', lab.pod, `iptables-${backend}`, ...args]);
  }
}

const CASES: {
  name: string;
  mesh?: Backend;
  noise?: Backend;
  flags?: string[];
  chosen: Backend;
  note?: string;
}[] = [
  { name: 'no rules anywhere: nft', chosen: 'nft', note: 'backend nft (auto: nft holds 0 rules, legacy 0)' },
  { name: 'the mesh used legacy', mesh: 'legacy', chosen: 'legacy', note: 'nft holds 0 rules, legacy 8' },
  { name: 'the mesh used nft', mesh: 'nft', chosen: 'nft', note: 'nft holds 8 rules, legacy 0' },
  {
    name: 'legacy mesh, a little nft noise',
    mesh: 'legacy',
    noise: 'nft',
    chosen: 'legacy',
    note: 'nft holds 2 rules, legacy 8',
  },
  {
    name: 'nft mesh, a little legacy noise',
    mesh: 'nft',
    noise: 'legacy',
    chosen: 'nft',
    note: 'nft holds 8 rules, legacy 2',
  },
  {
    name: '--backend nft overrides a legacy mesh',
    mesh: 'legacy',
    flags: ['--backend', 'nft'],
    chosen: 'nft',
  },
  {
    name: '--backend legacy overrides an nft mesh',
    mesh: 'nft',
    flags: ['--backend', 'legacy'],
    chosen: 'legacy',
  },
];

// Detection is only meaningful with both backends at hand.
const BOTH_WORK = LAB_READY && (await backendWorks('nft')) && (await backendWorks('legacy'));

describe.skipIf(!BOTH_WORK)('backend detection with real rules', () => {
  // The CLI as shipped: vitest's global setup builds dist/cli.mjs from the current sources.
  const cli = { path: CLI };

  it.each(CASES.map((c, i) => ({ ...c, i })))(
    '$name',
    async ({ i, mesh, noise, flags = [], chosen, note }) => {
      const lab = await Lab.create(`d${i}`);
      try {
        if (mesh !== undefined) await lab.installMesh(mesh);
        if (noise !== undefined) await addFilterRules(lab, noise);
        const dry = await lab.init(cli.path, ['--dry-run', '--ipv6', 'off', ...flags]);
        expect(dry.exitCode, dry.stderr).toBe(0);
        expect(dry.stdout.split('\n')[0]).toBe(`# IPv4: iptables-${chosen}-restore --noflush`);
        if (note !== undefined) expect(dry.stderr).toContain(note);
        else expect(dry.stderr).not.toContain('auto');

        // And the real run writes where the dry run said.
        const applied = await lab.init(cli.path, ['--ipv6', 'off', ...flags]);
        expect(applied.exitCode, applied.stderr).toBe(0);
        const other: Backend = chosen === 'nft' ? 'legacy' : 'nft';
        const chain = (backend: Backend) =>
          lab.run(lab.pod, [`iptables-${backend}-save`]).then((r) => r.stdout.includes(':OSM_HEALTHCHECK'));
        expect(await chain(chosen)).toBe(true);
        expect(await chain(other)).toBe(false);
      } finally {
        await lab.close();
      }
    },
  );
});
