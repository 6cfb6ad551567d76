// `init` flags and port lists: what is accepted, how it is normalised, and the message for what is not.

import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseInitOptions, scriptArgs } from '../../src/init/options.js';
import { DEFAULT_INIT_PORTS, formatPortRanges, parsePortRanges } from '../../src/init/ports.js';
import { COMPANION_UID } from '../../src/scheme.js';

describe('parsePortRanges', () => {
  it.each([
    { name: 'one port', text: '15901', want: '15901' },
    { name: 'one range', text: '15901-15904', want: '15901-15904' },
    { name: 'sorted', text: '16000,15901-15904', want: '15901-15904,16000' },
    { name: 'adjacent ports merge into a range', text: '15904,15903,15902,15901', want: '15901-15904' },
    { name: 'overlapping ranges merge', text: '15901-15903,15902-15910', want: '15901-15910' },
    { name: 'a range inside another', text: '1-100,50-60', want: '1-100' },
    { name: 'duplicates', text: '15901,15901', want: '15901' },
    { name: 'spaces around items', text: ' 15901 , 15902 ', want: '15901-15902' },
    { name: 'single-port range', text: '8080-8080', want: '8080' },
    { name: 'the extremes', text: '1,65535', want: '1,65535' },
  ])('$name: "$text" -> "$want"', ({ text, want }) => {
    expect(formatPortRanges(parsePortRanges(text))).toBe(want);
  });

  it.each([
    { name: 'zero', text: '0', message: '--ports: 0 is not a port 1-65535' },
    { name: 'too big', text: '70000', message: '--ports: 70000 is not a port 1-65535' },
    {
      name: 'too big in a range',
      text: '15901-70000',
      message: '70000 is not a port 1-65535 (in "15901-70000")',
    },
    { name: 'leading zero', text: '01590', message: '--ports: 01590 is not a port 1-65535' },
    { name: 'words', text: 'a-b', message: '"a-b" is not a port or a range like 15901-15904' },
    { name: 'empty', text: '', message: '--ports is empty' },
    { name: 'blank', text: '  ', message: '--ports is empty' },
    {
      name: 'empty item',
      text: '15901,,15902',
      message: '"" is not a port or a range like 15901-15904 (in "15901,,15902")',
    },
    { name: 'trailing comma', text: '15901,', message: '"" is not a port or a range' },
    { name: 'backwards range', text: '15904-15901', message: 'range "15904-15901" runs backwards' },
    { name: 'negative', text: '-1', message: '"-1" is not a port or a range' },
    { name: 'open range', text: '15901-', message: '"15901-" is not a port or a range' },
    { name: 'colon range', text: '15901:15904', message: '"15901:15904" is not a port or a range' },
    { name: 'six digits', text: '159010', message: '"159010" is not a port or a range' },
    { name: 'decimal', text: '15901.5', message: '"15901.5" is not a port or a range' },
  ])('$name: "$text" is refused', ({ text, message }) => {
    expect(() => parsePortRanges(text)).toThrow(UsageError);
    expect(() => parsePortRanges(text)).toThrow(message);
  });
});

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

  it.each([
    { name: 'unknown flag', argv: ['--bogus'], message: "Unknown option '--bogus'" },
    { name: 'positional argument', argv: ['now'], message: 'init takes no arguments, got "now"' },
    {
      name: '--ports without a value',
      argv: ['--ports'],
      message: "Option '--ports <value>' argument missing",
    },
    { name: '--ports 0', argv: ['--ports', '0'], message: '0 is not a port 1-65535' },
    { name: '--ports 70000', argv: ['--ports', '70000'], message: '70000 is not a port 1-65535' },
    { name: '--ports a-b', argv: ['--ports', 'a-b'], message: '"a-b" is not a port or a range' },
    { name: '--ports empty', argv: ['--ports='], message: '--ports is empty' },
    {
      name: '--uid 0 (root)',
      argv: ['--uid', '0'],
      message: `--uid must be a non-root user id 1-4294967294 (the companion's runAsUser), got "0"`,
    },
    { name: '--uid by name', argv: ['--uid=nobody'], message: '--uid must be a non-root user id' },
    { name: '--uid too big', argv: ['--uid', '4294967295'], message: '--uid must be a non-root user id' },
    { name: '--uid empty', argv: ['--uid='], message: 'got ""' },
    {
      name: '--ipv6 yes',
      argv: ['--ipv6', 'yes'],
      message: '--ipv6 must be one of auto, on, off, got "yes"',
    },
    {
      name: '--backend iptables',
      argv: ['--backend=iptables'],
      message: '--backend must be one of auto, nft, legacy',
    },
    {
      name: 'boolean flag with a value',
      argv: ['--dry-run=yes'],
      message: "Option '--dry-run' does not take",
    },
  ])('$name is a usage error', ({ argv, message }) => {
    expect(() => parseInitOptions(argv)).toThrow(UsageError);
    expect(() => parseInitOptions(argv)).toThrow(message);
  });
});
