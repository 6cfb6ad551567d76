// `node`'s flags: the pod networks canonical as iptables-save prints them (so --ensure compares like with like),
// host bits and other families' junk refused with the flag named, and the script's argv for each run.

import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseCidrs } from '../../src/node/cidr.js';
import { BACKEND_ENV, nodeScriptArgs, POD_CIDR_ENV, parseNodeOptions } from '../../src/node/options.js';

describe('parseCidrs', () => {
  it.each([
    { text: '10.88.0.0/16', want: ['10.88.0.0/16'] },
    { text: '10.88.0.0/16, fd00:88::/64', want: ['10.88.0.0/16', 'fd00:88::/64'] },
    { text: 'FD00:0088:0000::/64', want: ['fd00:88::/64'] },
    { text: '0.0.0.0/0,::/0', want: ['0.0.0.0/0', '::/0'] },
    { text: '10.88.1.4/30', want: ['10.88.1.4/30'] },
    { text: 'fd00:253:0:0:0:0:0:0/64', want: ['fd00:253::/64'] },
  ])('$text', ({ text, want }) => {
    expect(parseCidrs(text).map((cidr) => cidr.text)).toEqual(want);
  });

  it.each([
    { text: '10.88.0.1/16', problem: '--pod-cidr "10.88.0.1/16" has host bits set' },
    { text: 'fd00:88::1/64', problem: '--pod-cidr "fd00:88::1/64" has host bits set' },
    { text: '10.88.0.0', problem: '--pod-cidr "10.88.0.0" is not a network' },
    { text: '10.88.0.0/33', problem: '--pod-cidr "10.88.0.0/33": the prefix is longer than 32' },
    { text: 'fd00::/129', problem: '--pod-cidr "fd00::/129": the prefix is longer than 128' },
    { text: 'pods/16', problem: '--pod-cidr "pods/16" is not a network' },
    { text: '::ffff:10.0.0.0/104', problem: '--pod-cidr "::ffff:10.0.0.0/104" is not a network' },
    { text: '10.88.0.0/16,', problem: '--pod-cidr "10.88.0.0/16," has an empty item' },
    { text: '10.88.0.0/16,10.88.0.0/16', problem: '--pod-cidr names 10.88.0.0/16 twice' },
  ])('refuses $text', ({ text, problem }) => {
    expect(() => parseCidrs(text)).toThrow(UsageError);
    expect(() => parseCidrs(text)).toThrow(problem);
  });
});

describe('parseNodeOptions', () => {
  afterEach(() => {
    delete process.env[POD_CIDR_ENV];
    delete process.env[BACKEND_ENV];
  });

  it('needs the pod networks, except to clean up', () => {
    expect(() => parseNodeOptions([])).toThrow(`--pod-cidr (or env ${POD_CIDR_ENV}) is required`);
    expect(parseNodeOptions(['--cleanup']).mode).toBe('cleanup');
  });

  it('reads them from the environment, naming it in an error', () => {
    process.env[POD_CIDR_ENV] = '10.88.0.1/16';
    expect(() => parseNodeOptions([])).toThrow(`env ${POD_CIDR_ENV} "10.88.0.1/16" has host bits set`);
  });

  it.each([
    { argv: ['--once', '--cleanup'], problem: '--once and --cleanup both given' },
    { argv: ['--resync', '0'], problem: '--resync' },
    { argv: ['--backend', 'nft-native'], problem: '--backend "nft-native" is not accepted' },
    { argv: ['--port', '70000'], problem: '--port' },
  ])('refuses $argv', ({ argv, problem }) => {
    expect(() => parseNodeOptions(['--pod-cidr', '10.88.0.0/16', ...argv])).toThrow(problem);
  });

  it.each(['auto', 'nft', 'legacy', 'nftables'])('takes --backend %s, and passes it on', (backend) => {
    const options = parseNodeOptions(['--pod-cidr', '10.88.0.0/16', '--backend', backend]);
    expect(nodeScriptArgs(options, 'apply').slice(-2)).toEqual(['--backend', backend]);
  });

  it('reads the backend from the environment under the flag, naming it in an error', () => {
    process.env[BACKEND_ENV] = 'nftables';
    expect(parseNodeOptions(['--pod-cidr', '10.88.0.0/16']).backend).toBe('nftables');
    expect(parseNodeOptions(['--pod-cidr', '10.88.0.0/16', '--backend', 'legacy']).backend).toBe('legacy');
    process.env[BACKEND_ENV] = '';
    expect(parseNodeOptions(['--pod-cidr', '10.88.0.0/16']).backend).toBe('auto');
    process.env[BACKEND_ENV] = 'iptables';
    expect(() => parseNodeOptions(['--pod-cidr', '10.88.0.0/16'])).toThrow(
      `env ${BACKEND_ENV} "iptables" is not accepted`,
    );
  });

  it("spells the script's argv out per run", () => {
    const options = parseNodeOptions(['--pod-cidr', '10.88.0.0/16,FD00:88::/64', '--backend', 'legacy']);
    expect(options).toMatchObject({ mode: 'run', resyncSeconds: 10, port: 15910, listen: undefined });
    expect(nodeScriptArgs(options, 'ensure')).toEqual([
      '--ports',
      '15901-15904',
      '--pod-cidr',
      '10.88.0.0/16,fd00:88::/64',
      '--backend',
      'legacy',
      '--ensure',
    ]);
    expect(nodeScriptArgs(options, 'apply')).not.toContain('--ensure');
  });
});
