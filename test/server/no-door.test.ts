// Issue 43's attack, as an attacker in another pod would make it: the built `serve`, running inject's own probe
// table for a pod with an HTTP liveness probe, an HTTPS readiness probe and a TCP startup probe, against real
// loopback apps. kubelet's rewritten probes pass; no other path, port, raw TLS or app body gets through, and the
// app sees no connection from any of it; over 127.0.0.1 and ::1 alike.

import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, isIPv6, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { httpApp, type Running } from '../helpers/apps.js';
import { runCli, startCli } from '../helpers/cli.js';
import { get, raw } from '../helpers/client.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';

type Role = 'liveness' | 'readiness' | 'startup' | 'healthcheck';
const ROLE_OF_PORT: Record<number, Role> = {
  15901: 'liveness',
  15902: 'readiness',
  15903: 'startup',
  15904: 'healthcheck',
};
const SECRET = 'the admin secret';

/** Every connection an app accepted, so a test can show none arrived. */
class Connections {
  count = 0;
  watch(server: Server | HttpServer): void {
    server.on('connection', () => {
      this.count++;
    });
  }
}

let web: Running<HttpServer>;
let https: Server;
let httpsPort: number;
let tcp: Server;
let tcpPort: number;
let cert: TestCert;
const seen = new Connections();
let dir: string;
let companion: Awaited<ReturnType<typeof startCli>> | undefined;
let ports: Record<Role, number>;
let probes: Record<
  string,
  { httpGet: { path: string; port: number; httpHeaders?: { name: string; value: string }[] } }
>;
let ipv6 = true;

async function listening(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

beforeAll(async () => {
  web = await httpApp((req, res) => {
    if (req.url === '/healthz') return res.end('ok');
    if (req.url === '/admin/secret') return res.end(SECRET);
    // A redirect elsewhere: kubelet reads it as a Warning with the body, which the companion relays.
    if (req.url === '/moved')
      return res.writeHead(302, { location: 'http://elsewhere.invalid/' }).end(SECRET);
    res.writeHead(404).end();
  });
  seen.watch(web.server);
  cert = makeTestCert();
  https = createHttpsServer({ key: cert.key, cert: cert.cert }, (req, res) =>
    req.url === '/ready' ? res.end('ready') : res.end(SECRET),
  );
  seen.watch(https);
  httpsPort = await listening(https);
  tcp = createTcpServer((s) => s.end());
  seen.watch(tcp);
  tcpPort = await listening(tcp);

  // inject's own table, from inject's own output for the pod.
  dir = mkdtempSync(join(tmpdir(), 'osm-hc-no-door-'));
  const pod = join(dir, 'pod.yaml');
  writeFileSync(
    pod,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'app',
            livenessProbe: { httpGet: { path: '/healthz', port: web.port } },
            readinessProbe: { httpGet: { path: '/ready', port: httpsPort, scheme: 'HTTPS' } },
            startupProbe: { tcpSocket: { port: tcpPort } },
          },
        ],
      },
    }),
  );
  const injected = await runCli(['inject', '-f', pod]);
  expect(injected.code, injected.stderr).toBe(0);
  const spec = parse(injected.stdout).spec;
  const companionSpec = spec.containers.find((c: { name: string }) => c.name === 'osm-healthcheck');
  const table = companionSpec.env.find((e: { name: string }) => e.name === 'OSM_HEALTHCHECK_PROBES').value;
  const app = spec.containers.find((c: { name: string }) => c.name === 'app');
  probes = { liveness: app.livenessProbe, readiness: app.readinessProbe, startup: app.startupProbe };

  // Bound on :: (no OSM_HEALTHCHECK_HOST): reached over 127.0.0.1 and ::1, as a pod's address of either family.
  companion = await startCli(
    ['serve'],
    { OSM_HEALTHCHECK_PORTS: '0,0,0,0', OSM_HEALTHCHECK_PROBES: table, POD_IP: '127.0.0.1' },
    (line) => line.msg === 'serving',
  );
  ports = companion.line.ports as Record<Role, number>;
  try {
    await get(`http://[::1]:${ports.healthcheck}/healthz`);
  } catch (err) {
    ipv6 = false;
    console.warn(`SKIPPED the ::1 half of test/server/no-door.test.ts: ${(err as Error).message}`);
  }
});

afterAll(async () => {
  companion?.child.kill('SIGINT');
  await web?.close();
  https?.close();
  tcp?.close();
  cert?.cleanup();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe.each(['127.0.0.1', '::1'])('over %s', (host) => {
  const base = (role: Role) => `http://${isIPv6(host) ? `[${host}]` : host}:${ports[role]}`;
  const skip = () => host === '::1' && !ipv6;

  /** Runs `attack` and shows that the apps accepted no connection meanwhile. */
  async function unseen<T>(attack: () => Promise<T>): Promise<T> {
    const before = seen.count;
    const result = await attack();
    expect(seen.count, 'connections the apps accepted').toBe(before);
    return result;
  }

  it.each(['liveness', 'readiness', 'startup'])("passes kubelet's rewritten %s probe", async (kind) => {
    if (skip()) return;
    const { httpGet } = probes[kind] ?? { httpGet: undefined };
    if (httpGet === undefined) throw new Error(`inject left no httpGet ${kind} probe`);
    const headers = Object.fromEntries((httpGet.httpHeaders ?? []).map((h) => [h.name, h.value]));
    const role = ROLE_OF_PORT[httpGet.port] as Role;
    const before = seen.count;
    const answer = await get(`${base(role)}${httpGet.path}`, headers);
    expect(answer.status, answer.body).toBe(200);
    // The app's accept event can trail the companion's answer (a TCP probe passes on connect): wait for it, so the
    // attacks below count from a settled number.
    await expect.poll(() => seen.count).toBeGreaterThan(before);
  });

  it.each([
    { name: 'the app admin path on the HTTP probe port', port: 'WEB', path: '/admin/secret' },
    { name: 'the app admin path on the HTTPS probe port', port: 'HTTPS', path: '/admin/secret' },
    { name: 'a path that answers a redirect with a body', port: 'WEB', path: '/moved' },
    { name: 'a doubled slash', port: 'WEB', path: '//healthz' },
    { name: 'an encoded slash', port: 'WEB', path: '/%2Fhealthz' },
    { name: 'a dot segment', port: 'WEB', path: '/healthz/../admin/secret' },
    { name: 'a query kubelet never sends', port: 'WEB', path: '/healthz?debug=1' },
    { name: 'the HTTP probe path on the HTTPS port', port: 'HTTPS', path: '/healthz' },
    { name: 'the table path on a port not in it', port: '22', path: '/healthz' },
  ])('refuses an HTTP header probe of $name: 403, nothing reaches the app', async ({ port, path }) => {
    if (skip()) return;
    const target = port === 'WEB' ? web.port : port === 'HTTPS' ? httpsPort : Number(port);
    const answer = await unseen(() =>
      get(`${base('healthcheck')}/osm-healthcheck`, {
        'Original-Http-Port': String(target),
        'Original-Http-Path': path,
      }),
    );
    expect(answer.status).toBe(403);
    expect(answer.body).not.toContain(SECRET);
    expect(answer.body).toBe(
      `healthcheck: Original-Http-Port ${target} + Original-Http-Path ${JSON.stringify(path)} is none of the probe table's probes; allowed: Original-Http-Port ${web.port} + Original-Http-Path "/healthz"; Original-Http-Port ${httpsPort} + Original-Http-Path "/ready"; Original-Tcp-Port ${tcpPort}\n`,
    );
  });

  it.each([
    { name: 'the HTTP probe port', port: 'WEB' },
    { name: 'the HTTPS probe port', port: 'HTTPS' },
    { name: 'a port not in the table', port: '22' },
  ])('refuses a TCP header probe of $name: 403, nothing reaches the app', async ({ port }) => {
    if (skip()) return;
    const target = port === 'WEB' ? web.port : port === 'HTTPS' ? httpsPort : Number(port);
    const answer = await unseen(() =>
      get(`${base('healthcheck')}/osm-healthcheck`, { 'Original-Tcp-Port': String(target) }),
    );
    expect(answer.status).toBe(403);
    expect(answer.body).toContain(
      `Original-Tcp-Port ${target} is none of the probe table's probes; allowed:`,
    );
  });

  it('serves the HTTPS table probe named by its port and path as the table entry, over HTTPS', async () => {
    if (skip()) return;
    const answer = await get(`${base('healthcheck')}/osm-healthcheck`, {
      'Original-Http-Port': String(httpsPort),
      'Original-Http-Path': '/ready',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain(`GET https://127.0.0.1:${httpsPort}/ready -> 200`);
  });

  it.each(['/osm-readiness-probe/app/../x', '//osm-readiness-probe/app', '/osm-readiness-probe%2Fapp'])(
    'answers the probe-route trick %s with 404, nothing reaching the app',
    async (path) => {
      if (skip()) return;
      const answer = await unseen(() =>
        raw(ports.readiness, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 5000, host),
      );
      expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    },
  );

  it('gives a TLS connection on the HTTPS probe kind port no pipe: a plain 400 and a close', async () => {
    if (skip()) return;
    const outcome = await unseen(
      () =>
        new Promise<string>((resolve) => {
          const socket = tlsConnect({ host, port: ports.readiness, rejectUnauthorized: false });
          socket.on('secureConnect', () => {
            socket.end('GET /admin/secret HTTP/1.1\r\nHost: x\r\n\r\n');
            resolve('handshake completed');
          });
          socket.on('error', (err) => resolve(`error ${(err as NodeJS.ErrnoException).code}`));
        }),
    );
    expect(outcome).toBe('error ERR_SSL_WRONG_VERSION_NUMBER');
    // What the TLS client choked on: the companion's HTTP answer to bytes that are no HTTP request.
    const hello = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]);
    expect(await unseen(() => raw(ports.readiness, hello, 5000, host))).toMatch(/^HTTP\/1\.1 400 /);
  });
});
