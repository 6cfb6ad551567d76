// The companion end to end over real sockets: routes, status codes, header conventions, limits, drain.

import { createServer as createHttpsServer } from 'node:https';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, httpApp, type Running, tcpApp } from '../helpers/apps.js';
import { get, httpsBody, raw } from '../helpers/client.js';
import { type Companion, startCompanion } from '../helpers/companion.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';
import { makeTestCert } from '../helpers/tls.js';

let web: Running<import('node:http').Server>;
let refused: number;
let companion: Companion;
const seen: Array<Record<string, string | string[] | undefined>> = [];

beforeAll(async () => {
  web = await httpApp((req, res) => {
    seen.push(req.headers);
    if (req.url === '/live') return res.end('alive');
    if (req.url === '/sick') return res.writeHead(500).end('sick');
    if (req.url === '/away') return res.writeHead(302, { location: 'http://elsewhere.invalid/' }).end();
    if (req.url === '/slow') return setTimeout(() => res.end('late'), 3000);
    res.writeHead(404).end();
  });
  refused = await closedPort();
  companion = await startCompanion({
    table: {
      liveness: {
        app: { httpGet: { port: web.port, path: '/live', httpHeaders: [{ name: 'x-probe', value: '1' }] } },
      },
      readiness: {
        app: { tcpSocket: { port: web.port } },
        db: { tcpSocket: { port: refused } },
      },
      startup: {
        app: { httpGet: { port: web.port, path: '/away' } },
        slow: { httpGet: { port: web.port, path: '/slow' } },
      },
    },
  });
});

afterAll(async () => {
  await companion.close();
  await web.close();
});

describe('probe routes', () => {
  it('passes a healthy app through with a one-line verdict and the table headers applied', async () => {
    const answer = await get(companion.url('liveness', '/osm-liveness-probe/app'));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(
      new RegExp(`^liveness app: GET http://127\\.0\\.0\\.1:${web.port}/live -> 200 in \\d+ ms\\n$`),
    );
    expect(seen.at(-1)?.['x-probe']).toBe('1');
    expect(seen.at(-1)?.['user-agent']).toBe('kube-probe/1.30');
  });

  it('serves the bare path when one container has the kind', async () => {
    expect((await get(companion.url('liveness', '/osm-liveness-probe'))).status).toBe(200);
  });

  it('runs tcpSocket entries and reports refusals as 503 with the reason', async () => {
    expect((await get(companion.url('readiness', '/osm-readiness-probe/app'))).status).toBe(200);
    const down = await get(companion.url('readiness', '/osm-readiness-probe/db'));
    expect(down.status).toBe(503);
    expect(down.body).toContain(`readiness db: tcp 127.0.0.1:${refused} failed: connect ECONNREFUSED`);
    const warn = companion.logs.find((l) => l.msg === 'probe failed' && l.container === 'db');
    expect(warn).toMatchObject({ level: 'warn', kind: 'readiness', container: 'db' });
    expect(String(warn?.reason)).toContain('ECONNREFUSED');
  });

  it('passes a redirect to another host through as the 3xx, without Location', async () => {
    const answer = await get(companion.url('startup', '/osm-startup-probe/app'));
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBeUndefined();
  });

  it('times out within the entry budget and answers 503 before kubelet gives up', async () => {
    const started = Date.now();
    const answer = await get(companion.url('startup', '/osm-startup-probe/slow'));
    // The app answers after 3 s; the budget is kubelet's 1 s less 100 ms, so the answer is the companion's.
    expect(answer.status).toBe(503);
    expect(answer.body).toContain('timeout after 900 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(900 + BUSY_MACHINE_SLACK_MS);
  });

  it.each([
    {
      name: 'ambiguous bare path',
      role: 'readiness',
      path: '/osm-readiness-probe',
      status: 404,
      body: 'name one',
    },
    {
      name: 'unknown container',
      role: 'liveness',
      path: '/osm-liveness-probe/nope',
      status: 404,
      body: 'known: /osm-liveness-probe/app',
    },
    {
      name: 'kind on the wrong port',
      role: 'readiness',
      path: '/osm-liveness-probe/app',
      status: 404,
      body: 'paths: /osm-readiness-probe/app',
    },
    {
      name: 'unknown path',
      role: 'liveness',
      path: '/metrics',
      status: 404,
      body: 'no such path "/metrics"',
    },
    {
      name: 'healthz off the healthcheck port',
      role: 'liveness',
      path: '/healthz',
      status: 404,
      body: 'no such path',
    },
  ] as const)('answers $name with $status', async ({ role, path, status, body }) => {
    const answer = await get(companion.url(role, path));
    expect(answer.status).toBe(status);
    expect(answer.body).toContain(body);
  });

  it.each(['POST', 'PUT', 'DELETE'])('refuses %s with 405', async (method) => {
    const answer = await get(companion.url('liveness', '/osm-liveness-probe/app'), {}, method);
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  it('answers /healthz on the healthcheck port', async () => {
    const answer = await get(companion.url('healthcheck', '/healthz'));
    expect(answer).toMatchObject({ status: 200, body: 'ok\n' });
  });
});

describe('/osm-healthcheck', () => {
  it.each(['liveness', 'readiness', 'startup', 'healthcheck'] as const)(
    'checks Original-Tcp-Port on the %s port',
    async (role) => {
      const answer = await get(companion.url(role, '/osm-healthcheck'), {
        'Original-Tcp-Port': String(web.port),
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatch(/^healthcheck: tcp 127\.0\.0\.1:\d+ connected in \d+ ms\n$/);
    },
  );

  it('runs the table probe Original-Http-Port + Original-Http-Path name, as that entry (its headers too)', async () => {
    const headers = { 'Original-Http-Port': String(web.port), 'Original-Http-Path': '/live' };
    const answer = await get(companion.url('healthcheck', '/osm-healthcheck'), headers);
    expect(answer.status).toBe(200);
    expect(answer.body).toContain(`GET http://127.0.0.1:${web.port}/live -> 200`);
    expect(seen.at(-1)?.['x-probe']).toBe('1');
  });

  it.each([
    {
      name: 'a probe path (an HTTP probe inject rewrote)',
      headers: { 'Original-Http-Port': '15901', 'Original-Http-Path': '/osm-liveness-probe/app' },
      body: /^liveness app: GET http:\/\/127\.0\.0\.1:\d+\/live -> 200 in \d+ ms$/,
    },
    {
      name: 'the healthcheck with Original-Tcp-Port (a tcpSocket probe inject rewrote)',
      headers: {
        'Original-Http-Port': '15904',
        'Original-Http-Path': '/osm-healthcheck',
        'Original-Tcp-Port': 'WEB',
      },
      body: /^healthcheck: tcp 127\.0\.0\.1:\d+ connected in \d+ ms$/,
    },
  ])("serves osm-edge's wrap of $name as the probe itself", async ({ headers, body }) => {
    const sent = Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k, v === 'WEB' ? String(web.port) : v]),
    );
    const answer = await get(companion.url('healthcheck', '/osm-healthcheck'), sent);
    expect(answer.status).toBe(200);
    expect(answer.body.trim()).toMatch(body);
  });

  it("answers 400 when osm-edge's wrap names a companion path that is not a probe", async () => {
    const headers = { 'Original-Http-Port': '15904', 'Original-Http-Path': '/healthz' };
    const answer = await get(companion.url('healthcheck', '/osm-healthcheck'), headers);
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('names this companion but none of its probe paths');
  });

  it('refuses ports the table does not name with 403', async () => {
    const answer = await get(companion.url('healthcheck', '/osm-healthcheck'), { 'Original-Tcp-Port': '22' });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain("Original-Tcp-Port 22 is none of the probe table's probes; allowed:");
  });

  it.each([
    { name: 'missing', headers: '' },
    { name: 'empty', headers: 'Original-Tcp-Port: \r\n' },
    { name: 'non-numeric', headers: 'Original-Tcp-Port: http\r\n' },
    { name: '0', headers: 'Original-Tcp-Port: 0\r\n' },
    { name: '65536', headers: 'Original-Tcp-Port: 65536\r\n' },
    { name: '80abc', headers: 'Original-Tcp-Port: 80abc\r\n' },
    { name: 'negative', headers: 'Original-Tcp-Port: -80\r\n' },
    { name: 'repeated', headers: 'Original-Tcp-Port: 80\r\nOriginal-Tcp-Port: 80\r\n' },
    { name: 'http empty', headers: 'Original-Http-Port: \r\n' },
    { name: 'http repeated', headers: 'Original-Http-Port: 80\r\nOriginal-Http-Port: 81\r\n' },
    {
      name: 'path repeated',
      headers: 'Original-Http-Port: 80\r\nOriginal-Http-Path: /a\r\nOriginal-Http-Path: /b\r\n',
    },
  ])('answers 400 to an Original-* header that is $name', async ({ headers }) => {
    const text = await raw(
      companion.ports.healthcheck,
      `GET /osm-healthcheck HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toMatch(/healthcheck: .*(port|Original)/);
  });

  it('takes " 80" as 80: HTTP strips optional whitespace around field values', async () => {
    const text = await raw(
      companion.ports.healthcheck,
      `GET /osm-healthcheck HTTP/1.1\r\nHost: x\r\nOriginal-Tcp-Port:  ${web.port} \r\nConnection: close\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('limits', () => {
  it('answers oversized headers with 431 and keeps serving', async () => {
    const text = await raw(
      companion.ports.liveness,
      `GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect((await get(companion.url('liveness', '/osm-liveness-probe/app'))).status).toBe(200);
  });

  it('cuts off a client sending headers one byte at a time while a probe beside it is answered', async () => {
    const socket = connect({ port: companion.ports.liveness, host: '127.0.0.1' });
    socket.on('error', () => {});
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    const started = Date.now();
    const drip = `GET /osm-liveness-probe/app HTTP/1.1\r\nX-Slow: ${'a'.repeat(100)}`;
    let i = 0;
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(drip[i++ % drip.length] ?? 'a');
    }, 250);
    try {
      const probe = await get(companion.url('liveness', '/osm-liveness-probe/app'));
      expect(probe.status).toBe(200);
      const closedAt = await closed;
      // headersTimeout 2 s, checked every 0.25 s: cut off in bounded time.
      expect(closedAt - started).toBeLessThan(2_250 + BUSY_MACHINE_SLACK_MS);
    } finally {
      clearInterval(timer);
      socket.destroy();
    }
  }, 15_000);

  it('bounds checks in flight per listener, shared fairly by caller: the caller holding the most is refused, another gets in, the other ports untouched', async () => {
    // Holds each request until released: without a table a check has 0.9 s, so nothing may wait on a clock here.
    const held: Array<import('node:http').ServerResponse> = [];
    const slow = await httpApp((_req, res) => held.push(res));
    const arrived = (n: number) => expect.poll(() => held.length).toBe(n);
    // No table: callers name the paths, so distinct checks can fill the gate (with one, each probe has one check).
    const small = await startCompanion({ maxProbesPerListener: 2 });
    const named = (path: string) => ({ 'Original-Http-Port': String(slow.port), 'Original-Http-Path': path });
    const healthcheck = (path: string, from?: string) =>
      get(small.url('healthcheck', '/osm-healthcheck'), named(path), 'GET', from);
    try {
      const first = ['/a', '/b'].map((path) => healthcheck(path));
      await arrived(2);
      const refusedAnswer = await healthcheck('/c');
      expect(refusedAnswer.status).toBe(503);
      expect(refusedAnswer.body).toContain('2 probes already in flight');
      const tcp = { 'Original-Tcp-Port': String(slow.port) };
      expect((await get(small.url('readiness', '/osm-healthcheck'), tcp)).status).toBe(200);
      // Another caller (kubelet's address, say) holds none: it takes the place of one of the first caller's checks,
      // which still runs to its end and answers.
      const other = healthcheck('/d', '127.0.0.2');
      await arrived(3);
      for (const res of held.splice(0)) res.end('ok');
      expect((await other).status).toBe(200);
      expect((await Promise.all(first)).map((a) => a.status)).toEqual([200, 200]);
    } finally {
      for (const res of held.splice(0)) res.end('ok');
      await small.close();
      await slow.close();
    }
  });
});

describe('TLS passthrough on 15901-15903 (--tls-passthrough)', () => {
  it('tunnels a ClientHello to the kind HTTPS port and still serves plain HTTP there', async () => {
    const cert = makeTestCert();
    const tls = createHttpsServer({ key: cert.key, cert: cert.cert }, (req, res) =>
      res.end(`tls ${req.url}`),
    );
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    const port = (tls.address() as { port: number }).port;
    const c = await startCompanion({
      table: { liveness: { app: { httpGet: { port, scheme: 'HTTPS', path: '/live' } } } },
      tlsPassthrough: true,
    });
    try {
      const body = await httpsBody(c.ports.liveness, '/live');
      expect(body).toBe('tls /live');
      const plain = await get(c.url('liveness', '/osm-liveness-probe/app'));
      expect(plain.status).toBe(200);
      expect(plain.body).toContain(`GET https://127.0.0.1:${port}/live -> 200`);
    } finally {
      await c.close();
      tls.closeAllConnections();
      await new Promise((r) => tls.close(r));
      cert.cleanup();
    }
  });
});

describe('IPv6', () => {
  it('listens on :: and probes an app on ::1', async () => {
    let app: Running<import('node:net').Server>;
    try {
      app = await tcpApp((s) => s.end(), '::1');
    } catch (err) {
      console.warn(`SKIPPED IPv6 companion test: ::1 unavailable (${(err as Error).message})`);
      return;
    }
    const c = await startCompanion({
      table: { readiness: { app: { tcpSocket: { port: app.port } } } },
      host: '::',
      targetHost: '::1',
    });
    try {
      const answer = await get(`http://[::1]:${c.ports.readiness}/osm-readiness-probe`);
      expect(answer.status).toBe(200);
      expect(answer.body).toContain(`tcp [::1]:${app.port} connected`);
      const v4 = await get(`http://127.0.0.1:${c.ports.readiness}/osm-readiness-probe`);
      expect(v4.status).toBe(200);
    } finally {
      await c.close();
      await app.close();
    }
  });
});

describe('drain', () => {
  it('finishes an in-flight probe, then stops accepting', async () => {
    const slow = await httpApp((_req, res) => setTimeout(() => res.end('done'), 400));
    const c = await startCompanion({
      table: { liveness: { app: { httpGet: { port: slow.port }, timeoutSeconds: 2 } } },
    });
    const inFlight = get(c.url('liveness', '/osm-liveness-probe/app'));
    await new Promise((r) => setTimeout(r, 100));
    const closing = c.close(3000);
    expect((await inFlight).status).toBe(200);
    await closing;
    await expect(get(c.url('liveness', '/osm-liveness-probe/app'))).rejects.toThrow(/ECONNREFUSED/);
    await slow.close();
  });
});
