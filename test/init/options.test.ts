// `init` flags: what is accepted, how it is normalised, and the message for what is not.

import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseInitOptions, scriptArgs } from '../../src/init/options.js';
import { DEFAULT_INIT_PORTS, formatPortRanges } from '../../src/ports.js';
import { COMPANION_UID } from '../../src/scheme.js';

describe('parseInitOptions', () => {
  // inject adds the init container with args ["init"] alone, so the defaults must fit the companion it adds.
  it("defaults: the companion's ports and user, auto everything, apply", () => {
    expect(parseInitOptions([])).toEqual({
      ports: DEFAULT_INIT_PORTS,
      uid: COMPANION_UID,
      dryRun: false,
      cleanup: false,
      ipv6: 'auto',
      backend: 'auto',
      seal: undefined,
    });
    expect(formatPortRanges(DEFAULT_INIT_PORTS)).toBe('15901-15904');
  });

  it.each([
    {
      name: 'every flag',
      argv: '--ports 15902,15901 --uid 1000 --dry-run --cleanup --ipv6 on --backend legacy'.split(' '),
      args: '--ports 15901-15902 --uid 1000 --ipv6 on --backend legacy --dry-run --cleanup'.split(' '),
    },
    {
      name: '--flag=value form',
      argv: ['--ports=16000', '--uid=4242', '--ipv6=off', '--backend=nft'],
      args: ['--ports', '16000', '--uid', '4242', '--ipv6', 'off', '--backend', 'nft'],
    },
    {
      name: 'nothing given: every default spelled out for the script',
      argv: [],
      args: ['--ports', '15901-15904', '--uid', '65532', '--ipv6', 'auto', '--backend', 'auto'],
    },
  ])('$name', ({ argv, args }) => {
    expect(scriptArgs(parseInitOptions(argv))).toEqual(args);
  });

  it('--seal-via: two script runs, the proof (open, root reaches the agent), then sealed or open', () => {
    const options = parseInitOptions(['--seal-via', '10.88.0.1']);
    expect(options.seal).toEqual({
      agentAddress: '10.88.0.1',
      agentPort: 15910,
      sealFile: '/run/osm-healthcheck/seal',
    });
    const base = ['--ports', '15901-15904', '--uid', '65532', '--ipv6', 'auto', '--backend', 'auto'];
    expect(scriptArgs(options, 'prove')).toEqual([...base, '--agent', '10.88.0.1', '--agent-port', '15910']);
    expect(scriptArgs(options, 'sealed')).toEqual([...base, '--sealed']);
    expect(scriptArgs(options, 'open')).toEqual(base);
  });

  // The downward API gives an empty status.hostIP only in odd cases; such a pod runs open, it never fails init.
  it('--seal-via with an empty address proves nothing and asks no agent', () => {
    const options = parseInitOptions(['--seal-via=', '--seal-file', '/tmp/seal', '--agent-port', '9']);
    expect(options.seal).toEqual({ agentAddress: '', agentPort: 9, sealFile: '/tmp/seal' });
    expect(scriptArgs(options, 'prove')).not.toContain('--agent');
  });

  it.each([
    { name: 'unknown flag', argv: ['--bogus'], message: 'unknown flag --bogus (init takes ' },
    {
      name: 'positional argument',
      argv: ['now'],
      message: 'unexpected argument "now" (init takes flags only',
    },
    {
      name: '--ports without a value',
      argv: ['--ports'],
      message: '--ports needs a value (--ports VALUE, or --ports=VALUE)',
    },
    { name: '--ports 0', argv: ['--ports', '0'], message: '--ports "0" is not a port (ports 1-65535' },
    {
      name: '--ports 70000',
      argv: ['--ports', '70000'],
      message: '--ports "70000" is not a port (ports 1-65535',
    },
    { name: '--ports a-b', argv: ['--ports', 'a-b'], message: '--ports "a-b" is not a port or a range (' },
    { name: '--ports empty', argv: ['--ports='], message: '--ports is empty' },
    {
      name: '--uid 0 (root)',
      argv: ['--uid', '0'],
      message: `--uid "0" is not accepted (a non-root user id 1-4294967294, the companion's runAsUser)`,
    },
    {
      name: '--uid by name',
      argv: ['--uid=nobody'],
      message: '--uid "nobody" is not accepted (a non-root user id',
    },
    {
      name: '--uid too big',
      argv: ['--uid', '4294967295'],
      message: '--uid "4294967295" is not accepted (a non-root user id',
    },
    { name: '--uid empty', argv: ['--uid='], message: '--uid "" is not accepted' },
    {
      name: '--ipv6 yes',
      argv: ['--ipv6', 'yes'],
      message: '--ipv6 "yes" is not accepted (auto, on, off)',
    },
    {
      name: '--backend iptables',
      argv: ['--backend=iptables'],
      message: '--backend "iptables" is not accepted (auto, nft, legacy)',
    },
    {
      name: '--seal-via a name',
      argv: ['--seal-via', 'node-1'],
      message: `--seal-via "node-1" is not accepted (the node's IP address (status.hostIP))`,
    },
    { name: '--seal-file alone', argv: ['--seal-file', '/x'], message: '--seal-file without --seal-via' },
    {
      name: '--agent-port 0',
      argv: ['--seal-via', '10.0.0.1', '--agent-port', '0'],
      message: '--agent-port "0" is not accepted (a port 1-65535)',
    },
    {
      name: '--seal-via with --dry-run',
      argv: ['--seal-via', '10.0.0.1', '--dry-run'],
      message: '--seal-via with --dry-run (one of them: the seal is proved by a run that applies)',
    },
    {
      name: 'boolean flag with a value',
      argv: ['--dry-run=yes'],
      message: '--dry-run takes no value, got "yes" (--dry-run alone)',
    },
  ])('$name is a usage error', ({ argv, message }) => {
    expect(() => parseInitOptions(argv)).toThrow(UsageError);
    expect(() => parseInitOptions(argv)).toThrow(message);
  });
});
