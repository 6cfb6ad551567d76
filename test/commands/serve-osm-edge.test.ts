// `serve --osm-edge-compat`, as osm-edge's and OSM's own healthcheck container (their injector's `command:
// [/osm-healthcheck]`, `args: [--verbosity, LEVEL]`): the healthcheck listener alone beside a sidecar that holds
// the three kind ports, /osm-healthcheck as their binary served it (cmd/osm-healthcheck/osm-healthcheck.go), their
// --verbosity flag, and a probe table refused. The exact port 15904 is proved in a network namespace by
// test/image/image.test.ts (scripts/image-build.sh) and test/e2e/osm-edge-pod.test.ts.

import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { levelOfVerbosity } from '../../src/log.js';
import { closedPort, httpApp, tcpApp } from '../helpers/apps.js';
import { runCli, startCli } from '../helpers/cli.js';
import { get, raw } from '../helpers/client.js';

const LOOPBACK = { OSM_HEALTHCHECK_HOST: '127.0.0.1' };
const READY = 'serving /osm-healthcheck only (osm-edge compat)';

describe("--verbosity: osm-edge's levels (pkg/logger/logger.go SetLogLevel) as pino's", () => {
  it.each([
    { value: 'trace', level: 'trace' },
    { value: 'debug', level: 'debug' },
    { value: 'info', level: 'info' },
    { value: 'INFO', level: 'info' },
    { value: 'warn', level: 'warn' },
    { value: 'error', level: 'error' },
    { value: 'fatal', level: 'fatal' },
    { value: 'panic', level: 'fatal' },
    { value: 'Disabled', level: 'silent' },
    // zerolog's NoLevel prints as "", which osm-edge's own binary refuses as well.
    { value: '', level: undefined },
    { value: 'warning', level: undefined },
    { value: 'silent', level: undefined },
    { value: 'constructor', level: undefined },
  ])('$value -> $level', ({ value, level }) => {
    expect(levelOfVerbosity(value)).toBe(level);
  });
});

describe('serve --osm-edge-compat', () => {
  it("binds the healthcheck port alone beside a sidecar holding the other three, and answers osm-edge's /osm-healthcheck", async () => {
    // The sidecar's listeners, bound first: serve must not even try their ports.
    const sidecar = await Promise.all([0, 1, 2].map(() => tcpApp((s) => s.end('SIDECAR\n'))));
    const app = await httpApp((req, res) => res.writeHead(req.url === '/ready' ? 200 : 500).end('app'));
    const tcp = await tcpApp((s) => s.end());
    const dead = await closedPort();
    const ports = [...sidecar.map((s) => s.port), 0].join(',');
    const { child, line, output } = await startCli(
      ['serve', '--osm-edge-compat', '--verbosity', 'info', '--ports', ports],
      LOOPBACK,
      (l) => l.msg === READY,
    );
    try {
      const bound = line.ports as Record<string, number>;
      expect(Object.keys(bound)).toEqual(['healthcheck']);
      const url = (path: string) => `http://127.0.0.1:${bound.healthcheck}${path}`;
      const healthcheck = (headers: Record<string, string>) => get(url('/osm-healthcheck'), headers);

      expect(await healthcheck({ 'Original-Tcp-Port': String(tcp.port) })).toMatchObject({ status: 200 });
      const refused = await healthcheck({ 'Original-Tcp-Port': String(dead) });
      // Theirs answers a failed connect with 404 (cmd/osm-healthcheck), and kubelet's event names the status.
      expect(refused.status).toBe(404);
      expect(refused.body).toContain(`ECONNREFUSED 127.0.0.1:${dead}`);
      const missing = await healthcheck({});
      expect(missing.status).toBe(400);
      expect(missing.body).toContain('Original-Tcp-Port');
      // osm-edge's HTTP convention, which its sidecar serves on 15901-15903, is served here too.
      const http = { 'Original-Http-Port': String(app.port) };
      expect(await healthcheck({ ...http, 'Original-Http-Path': '/ready' })).toMatchObject({ status: 200 });
      expect(await healthcheck({ ...http, 'Original-Http-Path': '/live' })).toMatchObject({ status: 500 });
      expect((await get(url('/osm-liveness-probe'))).status).toBe(404);
      expect((await get(url('/healthz'))).status).toBe(200);

      // The sidecar's ports still answer the sidecar.
      for (const s of sidecar) expect(await raw(s.port, '')).toBe('SIDECAR\n');
      // The pod stops: the app's ports close, and serve, which waits on the ports it was asked about, drains.
      await Promise.all([app.close(), tcp.close()]);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code, output()).toBe(0);
      const asked = [tcp.port, dead, app.port].sort((a, b) => a - b);
      expect(output()).toContain(`"appPorts":[${asked.join(',')}],"graceSeconds":30`);
      expect(output()).toContain('"reason":"app gone"');
    } finally {
      child.kill('SIGKILL');
      await Promise.all([...sidecar, app, tcp].map((s) => s.close()));
    }
  });

  it('logs at the level --verbosity names: debug shows each passed probe', async () => {
    const tcp = await tcpApp((s) => s.end());
    const { child, line, output } = await startCli(
      ['serve', '--osm-edge-compat', '-v', 'DEBUG', '--ports', '0,0,0,0'],
      LOOPBACK,
      (l) => l.msg === READY,
    );
    try {
      const port = (line.ports as Record<string, number>).healthcheck;
      const answer = await get(`http://127.0.0.1:${port}/osm-healthcheck`, {
        'Original-Tcp-Port': String(tcp.port),
      });
      expect(answer.status).toBe(200);
      await tcp.close();
      child.kill('SIGTERM');
      await once(child, 'exit');
      expect(output()).toContain('"level":"debug"');
    } finally {
      child.kill('SIGKILL');
      await tcp.close();
    }
  });

  it.each([
    {
      name: '--verbosity without --osm-edge-compat',
      args: ['--verbosity', 'info'],
      env: {},
      message: "--verbosity goes with --osm-edge-compat (serve's own flag is --log-level) [OSM_HC_USAGE]",
    },
    {
      name: 'a level osm-edge refuses too',
      args: ['--osm-edge-compat', '--verbosity', 'loud'],
      env: {},
      message: '--verbosity "loud" is not accepted (trace, debug, info, warn, error, fatal, panic, disabled)',
    },
    {
      name: 'both --verbosity and --log-level',
      args: ['--osm-edge-compat', '--verbosity', 'info', '--log-level', 'debug'],
      env: {},
      message: '--verbosity and --log-level both given (one of them)',
    },
    {
      name: 'a probe table from the environment',
      args: ['--osm-edge-compat'],
      env: { OSM_HEALTHCHECK_PROBES: '{"liveness":{"app":{"tcpSocket":{"port":8080}}}}' },
      message:
        "--osm-edge-compat serves /osm-healthcheck alone, but a probe table came from env OSM_HEALTHCHECK_PROBES (no table: its routes need ports 15901-15903, where osm-edge's sidecar listens)",
    },
  ])('exits 2 on $name, naming it', async ({ args, env, message }) => {
    const result = await runCli(['serve', ...args, '--ports', '0,0,0,0'], { env: { ...LOOPBACK, ...env } });
    expect(result.stderr).toContain(message);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  });
});
