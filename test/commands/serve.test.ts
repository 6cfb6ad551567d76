// `osm-healthcheck serve` as a process: flags, env, start-up line, fail-closed table, graceful stop.

import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpApp } from '../helpers/apps.js';
import { runCli, startCli } from '../helpers/cli.js';
import { get, httpsBody } from '../helpers/client.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';
import { startLoopbackHttps } from '../helpers/loopback-https.js';

const EPHEMERAL = { OSM_HEALTHCHECK_PORTS: '0,0,0,0', OSM_HEALTHCHECK_HOST: '127.0.0.1' };

describe('serve', () => {
  it('starts, logs the table and its ports, serves probes, and stops cleanly on SIGTERM once the app is gone', async () => {
    const app = await httpApp((_req, res) => res.end('ok'));
    const table = JSON.stringify({ liveness: { app: { httpGet: { port: app.port, path: '/live' } } } });
    const { child, line, output } = await startCli(
      ['serve'],
      { ...EPHEMERAL, OSM_HEALTHCHECK_PROBES: table },
      (l) => l.msg === 'serving',
    );
    try {
      expect(line.probes).toEqual([`liveness app -> HTTP :${app.port}/live (timeout 1s)`]);
      const ports = line.ports as Record<string, number>;
      const answer = await get(`http://127.0.0.1:${ports.liveness}/osm-liveness-probe`);
      expect(answer.status).toBe(200);
      expect((await get(`http://127.0.0.1:${ports.healthcheck}/healthz`)).status).toBe(200);
      // The app stops first here; test/e2e/stop-order.test.ts has the companion outlive an app still stopping.
      await app.close();
      const started = Date.now();
      child.kill('SIGTERM');
      const [code] = await once(child, 'close');
      expect(code).toBe(0);
      // Not the 30 s grace.
      expect(Date.now() - started).toBeLessThan(BUSY_MACHINE_SLACK_MS);
      expect(output()).toContain('"reason":"app gone"');
      expect(output()).toContain('"msg":"stopped"');
    } finally {
      child.kill('SIGKILL');
      await app.close();
    }
  });

  it('reads the table from --probes and serves header probes only without one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'osm-hc-serve-'));
    const file = join(dir, 'probes.json');
    writeFileSync(file, JSON.stringify({ readiness: { web: { tcpSocket: { port: 1 } } } }));
    const withFile = await startCli(['serve', '--probes', file], EPHEMERAL, (l) => l.msg === 'serving');
    expect(withFile.line.probes).toEqual(['readiness web -> tcp :1 (timeout 1s)']);
    withFile.child.kill('SIGTERM');
    await once(withFile.child, 'exit');

    const bare = await startCli(['serve'], EPHEMERAL, (l) =>
      String(l.msg).startsWith('serving header-driven'),
    );
    bare.child.kill('SIGINT');
    const [code] = await once(bare.child, 'exit');
    expect(code).toBe(0);
  });

  it.each([
    { name: 'SIGINT (a person at a terminal)', signals: ['SIGINT'], waited: undefined },
    {
      name: 'a second SIGTERM while waiting',
      signals: ['SIGTERM', 'SIGTERM'],
      waited: 'SIGTERM while waiting',
    },
    { name: 'SIGINT while waiting', signals: ['SIGTERM', 'SIGINT'], waited: 'SIGINT while waiting' },
  ])('drains at once, the app still up, on $name', async ({ signals, waited }) => {
    const app = await httpApp((_req, res) => res.end('ok'));
    const table = JSON.stringify({ readiness: { app: { httpGet: { port: app.port } } } });
    const { child, output } = await startCli(
      ['serve'],
      { ...EPHEMERAL, OSM_HEALTHCHECK_PROBES: table },
      (l) => l.msg === 'serving',
    );
    try {
      const [first, second] = signals;
      child.kill(first as NodeJS.Signals);
      if (second !== undefined) {
        await expect.poll(output).toContain('waiting for the app to stop before draining');
        child.kill(second as NodeJS.Signals);
      }
      const started = Date.now();
      const [code] = await once(child, 'close');
      expect(code).toBe(0);
      // Not the 30 s grace.
      expect(Date.now() - started).toBeLessThan(BUSY_MACHINE_SLACK_MS);
      if (waited === undefined) expect(output()).not.toContain('waiting for the app');
      else expect(output()).toContain(`"reason":"${waited}"`);
    } finally {
      child.kill('SIGKILL');
      await app.close();
    }
  });

  it.each([
    { level: 'info', limit: 0 },
    { level: 'debug', limit: 10 },
  ])('serves with stack traces off, unless debug logging asks: $level', async ({ level, limit }) => {
    const report = `process.on('SIGUSR2', () => process.stderr.write('stackTraceLimit ' + Error.stackTraceLimit + '\\n'));`;
    const { child, output } = await startCli(
      ['serve', '--log-level', level],
      { ...EPHEMERAL, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(report)}` },
      (l) => String(l.msg).startsWith('serving'),
    );
    try {
      child.kill('SIGUSR2');
      await expect.poll(output).toContain(`stackTraceLimit ${limit}`);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it.each([
    { name: 'TCP only', handler: { tcpSocket: { port: 1 } }, loaded: [] },
    { name: 'an HTTPS entry', handler: { httpGet: { port: 1, scheme: 'HTTPS' } }, loaded: ['tls'] },
    { name: 'a gRPC entry', handler: { grpc: { port: 1 } }, loaded: ['http2', 'tls'] },
  ])(
    'loads TLS and gRPC at start-up only for a table that needs them: $name',
    async ({ handler, loaded }) => {
      // Reports, as the process exits, which of node's TLS and HTTP/2 modules it ever loaded (grpc-js needs both).
      const report = `process.on('exit', () => process.stderr.write('loaded ' + JSON.stringify(
      process.moduleLoadList.filter((m) => m === 'NativeModule tls' || m === 'NativeModule http2')
        .map((m) => m.slice('NativeModule '.length)).sort()) + '\\n'));`;
      const { child, output } = await startCli(
        ['serve'],
        {
          ...EPHEMERAL,
          OSM_HEALTHCHECK_PROBES: JSON.stringify({ readiness: { app: handler } }),
          NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(report)}`,
        },
        (l) => l.msg === 'serving',
      );
      child.kill('SIGTERM');
      await once(child, 'close');
      expect(output()).toContain(`loaded ${JSON.stringify(loaded)}`);
    },
  );

  it.each([
    {
      name: 'an invalid table',
      args: [],
      env: { OSM_HEALTHCHECK_PROBES: '{"liveness":{"app":{"httpGet":{"port":"http"}}}}' },
      code: 1,
      message: 'liveness.app.httpGet.port: must be an integer 1-65535, got "http" [OSM_HC_TABLE]',
    },
    {
      name: 'table JSON that does not parse',
      args: [],
      env: { OSM_HEALTHCHECK_PROBES: '{' },
      code: 1,
      message: 'env OSM_HEALTHCHECK_PROBES is not valid JSON',
    },
    {
      name: 'a missing table file',
      args: ['--probes', '/nonexistent/p.json'],
      env: {},
      code: 1,
      message: 'cannot read probe table file /nonexistent/p.json',
    },
    {
      name: 'bad --ports',
      args: ['--ports', '1,2,3'],
      env: {},
      code: 2,
      message: '--ports "1,2,3" is not accepted (four ports 0-65535: liveness,readiness,startup,healthcheck)',
    },
    {
      name: 'bad --allowed-ports',
      args: ['--allowed-ports', '0'],
      env: {},
      code: 2,
      message: '--allowed-ports "0" is not a port (ports 1-65535',
    },
    {
      name: 'bad --log-level',
      args: ['--log-level', 'loud'],
      env: {},
      code: 2,
      message: '--log-level "loud" is not accepted (fatal, error,',
    },
    {
      name: 'an unknown flag',
      args: ['--nope'],
      env: {},
      code: 2,
      message: 'unknown flag --nope (serve takes ',
    },
    {
      name: 'a bad --shutdown-grace',
      args: ['--shutdown-grace', '30s'],
      env: {},
      code: 2,
      message: `--shutdown-grace "30s" is not accepted (whole seconds, 0 or more: the pod's terminationGracePeriodSeconds)`,
    },
    {
      name: 'a shared-check window past 100 ms (an answer older than that is not the probe of now)',
      args: ['--shared-check-window', '250'],
      env: {},
      code: 2,
      message: '--shared-check-window "250" is not accepted (whole milliseconds, 0 to 100)',
    },
    {
      name: 'a bad shared-check window env',
      args: [],
      env: { OSM_HEALTHCHECK_SHARED_CHECK_WINDOW_MS: '0.5' },
      code: 2,
      message:
        'env OSM_HEALTHCHECK_SHARED_CHECK_WINDOW_MS "0.5" is not accepted (whole milliseconds, 0 to 100)',
    },
    {
      name: 'a bad grace env',
      args: [],
      env: { OSM_HEALTHCHECK_SHUTDOWN_GRACE_SECONDS: '-1' },
      code: 2,
      message: 'env OSM_HEALTHCHECK_SHUTDOWN_GRACE_SECONDS "-1" is not accepted (whole seconds',
    },
    {
      name: '--tls-passthrough without a table',
      args: ['--tls-passthrough'],
      env: {},
      code: 2,
      message:
        'serve: --tls-passthrough passes nothing through: no probe table (a probe table with an HTTPS httpGet probe, or no --tls-passthrough) [OSM_HC_USAGE]',
    },
    {
      name: 'env OSM_HEALTHCHECK_TLS_PASSTHROUGH with a table of no HTTPS probe',
      args: [],
      env: {
        OSM_HEALTHCHECK_TLS_PASSTHROUGH: 'true',
        OSM_HEALTHCHECK_PROBES: '{"liveness":{"app":{"httpGet":{"port":8080}}}}',
      },
      code: 2,
      message:
        'env OSM_HEALTHCHECK_TLS_PASSTHROUGH passes nothing through: no kind of the probe table has one HTTPS httpGet port',
    },
    {
      name: '--tls-passthrough with --osm-edge-compat',
      args: ['--tls-passthrough', '--osm-edge-compat'],
      env: {},
      code: 2,
      message: '--tls-passthrough with --osm-edge-compat (one of them: compat binds 15904 alone)',
    },
    {
      name: 'a bad OSM_HEALTHCHECK_TLS_PASSTHROUGH',
      args: [],
      env: { OSM_HEALTHCHECK_TLS_PASSTHROUGH: 'yes' },
      code: 2,
      message: 'env OSM_HEALTHCHECK_TLS_PASSTHROUGH "yes" is not accepted (true or false)',
    },
    {
      name: 'a bad POD_IP',
      args: [],
      env: { POD_IP: 'pod.local' },
      code: 2,
      message: `osm-healthcheck serve: env POD_IP "pod.local" is not accepted (an IP address: the pod's status.podIP) [OSM_HC_USAGE]`,
    },
  ])('exits non-zero on $name, naming it', async ({ args, env, code, message }) => {
    const result = await runCli(['serve', ...args], { env: { ...EPHEMERAL, ...env } });
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  it.each([
    { name: 'serve without a table', args: [], reach: 'any port, any path', ready: 'serving header-driven' },
    {
      name: 'serve --allowed-ports without a table',
      args: ['--allowed-ports', '9000-9001,8080'],
      reach: 'ports 8080, 9000, 9001 (--allowed-ports), any path',
      ready: 'serving header-driven',
    },
    {
      name: 'the osm-edge drop-in',
      args: ['--osm-edge-compat'],
      reach: 'any port, any path',
      ready: 'serving /osm-healthcheck only',
    },
  ])('says once at start, before the ready line, what any caller can reach: $name', async (c) => {
    const { child, output } = await startCli(
      ['serve', ...c.args],
      { ...EPHEMERAL, POD_IP: '127.0.0.1' },
      (l) => String(l.msg).startsWith(c.ready),
    );
    try {
      const lines = output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const warnings = lines.filter((l) => String(l.msg).startsWith('serving without a probe table'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({
        level: 'warn',
        target: '127.0.0.1',
        reach: c.reach,
        msg: `serving without a probe table: any caller that reaches /osm-healthcheck can have this companion probe ${c.reach} on 127.0.0.1, past the mesh`,
      });
      expect(lines.indexOf(warnings[0] as Record<string, unknown>)).toBe(lines.length - 2);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('logs no such warning with a table, and pipes TLS only with OSM_HEALTHCHECK_TLS_PASSTHROUGH', async () => {
    const tls = await startLoopbackHttps((req, res) => res.end(`tls ${req.url}`));
    const port = Number(new URL(tls.url).port);
    const table = JSON.stringify({
      readiness: { app: { httpGet: { port, scheme: 'HTTPS', path: '/ready' } } },
    });
    const { child, line, output } = await startCli(
      ['serve'],
      { ...EPHEMERAL, OSM_HEALTHCHECK_PROBES: table, OSM_HEALTHCHECK_TLS_PASSTHROUGH: 'true' },
      (l) => l.msg === 'serving',
    );
    try {
      expect(output()).not.toContain('serving without a probe table');
      expect(line.tlsPassthrough).toEqual({ readiness: port });
      const { readiness } = line.ports as Record<'readiness', number>;
      const body = await httpsBody(readiness, '/anything');
      // On, the pipe carries any path: why it is off unless asked for (docs/security.md).
      expect(body).toBe('tls /anything');
    } finally {
      child.kill('SIGKILL');
      await tls.close();
    }
  });

  it('exits 1 when a port is taken', async () => {
    const busy = await httpApp((_req, res) => res.end());
    try {
      const result = await runCli(['serve', '--ports', `0,0,0,${busy.port}`], {
        env: { OSM_HEALTHCHECK_HOST: '127.0.0.1' },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/cannot listen on ports .*EADDRINUSE.*\[OSM_HC_LISTEN\]/);
    } finally {
      await busy.close();
    }
  });

  it('prints help and version', async () => {
    const help = await runCli(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--allowed-ports LIST');
    const version = await runCli(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });
});
