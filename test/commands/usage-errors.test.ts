// One shape for every usage error of every command: `osm-healthcheck COMMAND: what is wrong (what is accepted)
// [OSM_HC_USAGE]`, exit 2, nothing on stdout; asked of the built CLI for each command and each kind of mistake.

import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, runScript } from '../helpers/cli.js';

beforeAll(async () => {
  await runScript('scripts/build.mjs', [], { timeoutMs: 120_000 });
}, 130_000);

/** Each command: a flag that takes a value, and a value it refuses. */
const COMMANDS = [
  { command: 'serve', flag: '--log-level', bad: 'loud' },
  { command: 'wait', flag: '--timeout', bad: 'soon' },
  { command: 'inject', flag: '--output', bad: 'xml' },
  { command: 'init', flag: '--uid', bad: '0' },
  { command: 'webhook', flag: '--port', bad: '99999' },
  { command: 'check', flag: '--output', bad: 'html' },
] as const;

const CASES = COMMANDS.flatMap(({ command, flag, bad }) => [
  {
    command,
    mistake: 'an unknown flag',
    args: ['--no-such-flag'],
    says: /^unknown flag --no-such-flag \(.*--help\)$/,
  },
  {
    command,
    mistake: 'a flag without its value',
    args: [flag],
    says: new RegExp(`^${flag} needs a value \\(`),
  },
  {
    command,
    mistake: 'a value the flag refuses',
    args: [flag, bad],
    says: new RegExp(`^${flag} "${bad}" is not accepted \\(`),
  },
  { command, mistake: 'a stray argument', args: ['stray'], says: /^unexpected argument "stray" \(/ },
]);

const SHAPE = /^osm-healthcheck (\w+): (.+) \((.+)\) \[OSM_HC_USAGE\]\n$/;

describe('usage errors: one shape in every command', () => {
  it.each(CASES)('$command, $mistake', async ({ command, args, says }) => {
    const { code, stdout, stderr } = await runCli([command, ...args], { timeoutMs: 20_000 });
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    const match = SHAPE.exec(stderr);
    expect(match, stderr).not.toBeNull();
    const [, named, problemAndAccepted] = match ?? [];
    expect(named).toBe(command);
    // The command is named once, by cli.ts: never `osm-healthcheck inject: inject: ...`.
    expect(stderr.startsWith(`osm-healthcheck ${command}: ${command}`)).toBe(false);
    expect(`${problemAndAccepted} (${(match ?? [])[3]})`).toMatch(says);
    // Our own words, not node:util parseArgs' (which suggest `--` with a broken quote).
    expect(stderr).not.toMatch(/To specify a positional argument|ERR_PARSE_ARGS/);
  });
});

describe('inject: the flags that depend on each other and on the Kubernetes version', () => {
  it.each([
    { args: ['--kube-version', '1.3'], says: '--kube-version "1.3" is older than 1.19 (1.19 or later' },
    { args: ['--kube-version', '2.0'], says: '--kube-version "2.0" is no Kubernetes version (1.19 or later' },
    { args: ['--kube-version', 'latest'], says: '--kube-version "latest" is no Kubernetes version (' },
    {
      args: ['--sidecar-containers-gate', '--kube-version', '1.33'],
      says: '--sidecar-containers-gate means nothing with --kube-version 1.33 (it goes with --kube-version 1.28',
    },
    {
      args: ['--sidecar-containers-gate'],
      says: '--sidecar-containers-gate means nothing with no --kube-version (',
    },
    { args: ['-f', 'a.yaml', '-'], says: 'unexpected argument "-" (' },
    { args: ['--image', '--placement', 'first'], says: '--image needs a value, got the flag --placement (' },
  ])('$args', async ({ args, says }) => {
    const { code, stderr } = await runCli(['inject', ...args], { input: 'apiVersion: v1\nkind: Pod\n' });
    expect(code).toBe(2);
    expect(stderr).toMatch(SHAPE);
    expect(stderr).toContain(`osm-healthcheck inject: ${says}`);
  });

  it('takes 1.19 and later, the gate with 1.28, and a lone - for stdin as the synopsis offers', async () => {
    const pod =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n';
    for (const args of [
      ['--kube-version', '1.19'],
      ['--kube-version', 'v1.28.3', '--sidecar-containers-gate'],
      ['-'],
    ]) {
      const { code, stderr, stdout } = await runCli(['inject', ...args], { input: pod });
      expect(code, `${args.join(' ')}: ${stderr}`).toBe(0);
      expect(stdout).toContain('name: osm-healthcheck');
    }
  });
});
