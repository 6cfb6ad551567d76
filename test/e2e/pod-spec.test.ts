// How the end-to-end test reads a manifest: probes with named ports resolved, env with the downward API, privileges
// as setpriv flags, and the servers each stand-in app runs for its probes.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { appServers } from './app-config.js';
import { containerEnv, readPodSpec, type SecurityContext, setprivArgs } from './pod-spec.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/e2e/${name}`, import.meta.url), 'utf8');

describe('readPodSpec', () => {
  it('reads the pod template of a Deployment, resolving named ports as kubelet does', () => {
    const [shop] = readPodSpec(fixture('shop.yaml')).containers;
    expect(shop?.probes.map((p) => [p.kind, p.action])).toEqual([
      [
        'liveness',
        {
          type: 'httpGet',
          scheme: 'HTTP',
          port: 8080,
          path: '/live',
          headers: [{ name: 'X-Probe-Token', value: 'e2e' }],
        },
      ],
      ['readiness', { type: 'tcpSocket', port: 8080 }],
      ['startup', { type: 'grpc', port: 9090, service: '' }],
    ]);
    expect(shop?.probes.find((p) => p.kind === 'liveness')?.timing).toEqual({
      initialDelaySeconds: 1,
      periodSeconds: 1,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });

  it('refuses a named port the container does not declare', () => {
    const yaml = fixture('shop.yaml').replace(
      'port: http\n              httpHeaders',
      'port: web\n              httpHeaders',
    );
    expect(() => readPodSpec(yaml)).toThrow('shop.livenessProbe: no container port named "web"');
  });
});

describe('postStart hooks', () => {
  const withHook = (lifecycle: string) =>
    `kind: Pod\nspec:\n  containers:\n    - name: c\n      image: i\n      lifecycle: ${lifecycle}\n`;

  it.each([
    {
      name: 'an exec hook',
      lifecycle: '{postStart: {exec: {command: [node, /app/dist/cli.mjs, wait]}}}',
      want: ['node', '/app/dist/cli.mjs', 'wait'],
    },
    { name: 'only a preStop hook', lifecycle: '{preStop: {exec: {command: [sleep, "5"]}}}', want: undefined },
  ])('$name', ({ lifecycle, want }) => {
    expect(readPodSpec(withHook(lifecycle)).containers[0]?.postStart).toEqual(want);
  });

  it('refuses a hook it cannot play', () => {
    expect(() => readPodSpec(withHook('{postStart: {httpGet: {port: 1}}}'))).toThrow(
      'c: only exec postStart hooks can be played',
    );
  });
});

describe('containerEnv', () => {
  it.each([
    { name: 'plain values', env: [{ name: 'A', value: '1' }], want: { A: '1' } },
    {
      name: 'the pod IP from the downward API',
      env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
      want: { POD_IP: '10.251.0.2' },
    },
  ])('$name', ({ env, want }) => {
    expect(containerEnv(env, { 'status.podIP': '10.251.0.2' })).toEqual(want);
  });

  it('refuses what it cannot resolve', () => {
    const env = [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }];
    expect(() => containerEnv(env, {})).toThrow('env NODE: cannot resolve');
  });
});

describe('setprivArgs', () => {
  it.each<{ name: string; sc: SecurityContext; want: string[] }>([
    { name: 'nothing set: nothing changed', sc: {}, want: [] },
    {
      name: "inject's companion: uid 65532, no capabilities, no privilege escalation",
      sc: { runAsUser: 65532, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      want: [
        'setpriv',
        '--reuid=65532',
        '--regid=65532',
        '--clear-groups',
        '--bounding-set=-all',
        '--inh-caps=-all',
        '--no-new-privs',
      ],
    },
    {
      name: "inject's init container: root with NET_ADMIN and NET_RAW only",
      sc: {
        runAsUser: 0,
        allowPrivilegeEscalation: false,
        capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
      },
      want: ['setpriv', '--bounding-set=-all,+net_admin,+net_raw', '--inh-caps=-all', '--no-new-privs'],
    },
  ])('$name', ({ sc, want }) => {
    expect(setprivArgs(sc)).toEqual(want);
  });
});

describe('appServers', () => {
  it.each([
    {
      name: 'shop: one HTTP server for /live (with its header) and the TCP probe, one gRPC server',
      file: 'shop.yaml',
      container: 0,
      want: [
        {
          type: 'http',
          port: 8080,
          tls: false,
          paths: { '/live': [{ name: 'X-Probe-Token', value: 'e2e' }] },
        },
        { type: 'grpc', port: 9090, services: [''] },
      ],
    },
    {
      name: 'secure: one HTTPS server for both paths',
      file: 'secure.yaml',
      container: 0,
      want: [
        {
          type: 'http',
          port: 8443,
          tls: true,
          paths: { '/live': [{ name: 'X-Probe-Token', value: 'e2e' }], '/ready': [] },
        },
      ],
    },
    {
      name: 'pair, cache: a TCP server',
      file: 'pair.yaml',
      container: 1,
      want: [{ type: 'tcp', port: 6379 }],
    },
  ])('$name', ({ file, container, want }) => {
    const spec = readPodSpec(fixture(file)).containers[container];
    if (spec === undefined) throw new Error(`no container ${container} in ${file}`);
    expect(appServers(spec)).toEqual(want);
  });
});
