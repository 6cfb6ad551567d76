// `node`'s flags: the pod networks canonical as iptables-save prints them (so --ensure compares like with like),
// host bits and other families' junk refused with the flag named, and the script's argv for each run.

import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseCidrs } from '../../src/node/cidr.js';
import {
  BACKEND_ENV,
  NODE_NAME_ENV,
  nodeScriptArgs,
  POD_CIDR_ENV,
  parseNodeOptions,
} from '../../src/node/options.js';

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
  });

  it('needs the pod networks, or the node and an API server to read them from, except to clean up', () => {
    expect(() => parseNodeOptions([], {})).toThrow(
      `--pod-cidr (or env ${POD_CIDR_ENV}) is required: the node's own networks cannot be read, as no --node-name (env ${NODE_NAME_ENV}) is given`,
    );
    expect(() => parseNodeOptions(['--node-name', 'k8s-node'], {})).toThrow(
      'as no API server is known (--kube-api, or KUBERNETES_SERVICE_HOST in a pod)',
    );
    expect(parseNodeOptions(['--cleanup'], {}).mode).toBe('cleanup');
  });

  it("reads the node's own networks in a pod, where Kubernetes names the API server, and posts events there", () => {
    const env = {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      [NODE_NAME_ENV]: 'node-a',
    };
    const node = {
      name: 'node-a',
      api: {
        url: 'https://10.96.0.1',
        caFile: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
        tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      },
    };
    const options = parseNodeOptions([], env);
    expect(options.podCidrs).toEqual({ from: 'node', node });
    expect(options.events).toEqual({ node });
    // Given networks win; the events still go to the node's pods.
    expect(parseNodeOptions(['--pod-cidr', '10.88.0.0/16'], env)).toMatchObject({
      podCidrs: { from: 'flag', cidrs: [{ family: 4, text: '10.88.0.0/16' }] },
      events: { node },
    });
    expect(parseNodeOptions(['--pod-cidr', '10.88.0.0/16'], {}).events).toEqual({
      off: `no --node-name (env ${NODE_NAME_ENV}) is given`,
    });
  });

  it.each([
    { argv: ['--node-name', 'Node_A'], problem: '--node-name "Node_A"' },
    { argv: ['--node-name', 'a', '--kube-api', 'http://127.0.0.1:6443'], problem: '--kube-api' },
    { argv: ['--node-name', 'a', '--kube-api', 'not a url'], problem: '--kube-api' },
  ])('refuses $argv', ({ argv, problem }) => {
    expect(() => parseNodeOptions(argv, {})).toThrow(problem);
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
    expect(() => parseNodeOptions(['--pod-cidr', '10.88.0.0/16', ...argv], {})).toThrow(problem);
  });

  it.each(['auto', 'nft', 'legacy', 'nftables'])('takes --backend %s, and passes it on', (backend) => {
    const options = parseNodeOptions(['--pod-cidr', '10.88.0.0/16', '--backend', backend], {});
    expect(nodeScriptArgs({ backend: options.backend, cidrs: [] }, 'apply').slice(-2)).toEqual([
      '--backend',
      backend,
    ]);
  });

  it('reads the backend from the environment under the flag, naming it in an error', () => {
    const cidrs = ['--pod-cidr', '10.88.0.0/16'];
    expect(parseNodeOptions(cidrs, { [BACKEND_ENV]: 'nftables' }).backend).toBe('nftables');
    expect(parseNodeOptions([...cidrs, '--backend', 'legacy'], { [BACKEND_ENV]: 'nftables' }).backend).toBe(
      'legacy',
    );
    expect(parseNodeOptions(cidrs, { [BACKEND_ENV]: '' }).backend).toBe('auto');
    expect(() => parseNodeOptions(cidrs, { [BACKEND_ENV]: 'iptables' })).toThrow(
      `env ${BACKEND_ENV} "iptables" is not accepted`,
    );
  });

  it("spells the script's argv out per run", () => {
    const options = parseNodeOptions(['--pod-cidr', '10.88.0.0/16,FD00:88::/64', '--backend', 'legacy'], {});
    expect(options).toMatchObject({ mode: 'run', resyncSeconds: 10, port: 15910, listen: undefined });
    const rules = {
      backend: options.backend,
      cidrs: 'cidrs' in options.podCidrs ? options.podCidrs.cidrs : [],
    };
    expect(nodeScriptArgs(rules, 'ensure')).toEqual([
      '--ports',
      '15901-15904',
      '--pod-cidr',
      '10.88.0.0/16,fd00:88::/64',
      '--backend',
      'legacy',
      '--ensure',
    ]);
    expect(nodeScriptArgs(rules, 'apply')).not.toContain('--ensure');
  });
});
