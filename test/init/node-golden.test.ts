// The rendered rules, golden: the node agent's SNAT and the sealed pod's bypass (and the proof's step), for both
// IP families, as each iptables backend's dry run prints them, from an empty ruleset in a scratch network
// namespace. UPDATE_GOLDEN=1 npx vitest run test/init/node-golden.test.ts rewrites the expected files.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { type Backend, backendWorks, LAB_READY, warnUnlessRoot } from './lab.js';

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

  it.each(CASES)('$name', async ({ name, argv }) => {
    const result = await execa('ip', ['netns', 'exec', ns, ...argv(backend)], { reject: false });
    expect(result.exitCode, result.stderr).toBe(0);
    const file = new URL(`${name}.${backend}.golden`, GOLDEN);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, `${result.stdout}\n`);
    expect(`${result.stdout}\n`).toBe(readFileSync(file, 'utf8'));
  });
});
