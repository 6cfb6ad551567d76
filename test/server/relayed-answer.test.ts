// What kubelet receives for each outcome (docs/architecture.md#what-kubelet-receives), over real sockets: a Warning (a 3xx kubelet would not
// follow) carries the app's status and body as kubelet would have read them, without Location, our reason in
// Osm-Healthcheck-Reason; every other outcome keeps our one-line reason as its body. Both the probe routes and
// osm-edge's Original-Http-Port route.

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REASON_HEADER } from '../../src/scheme.js';
import { MAX_REASON_CHARS, reasonHeaderValue } from '../../src/server/relayed-answer.js';
import { closedPort, httpApp, type Running } from '../helpers/apps.js';
import { type Companion, startCompanion } from '../helpers/companion.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** kubelet's GET (or a HEAD), the body kept as bytes. */
function fetchRaw(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: { 'user-agent': 'kube-probe/1.30', ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** agnhost's /redirect?loc=http://0.0.0.0/ as Go's http.Redirect writes it for a GET. */
const AGNHOST_FOUND = Buffer.from('<a href="http://0.0.0.0/">Found</a>.\n\n');
const LONG = Buffer.concat([Buffer.alloc(10_239, 'x'), Buffer.from('é and more')]);

const ROUTES: Record<string, { status: number; headers: Record<string, string>; body: Buffer }> = {
  '/found': {
    status: 302,
    headers: { Location: 'http://0.0.0.0/', 'Content-Type': 'text/html; charset=utf-8' },
    body: AGNHOST_FOUND,
  },
  '/nolocation': { status: 302, headers: {}, body: Buffer.from('no Location here') },
  '/notmodified': { status: 304, headers: { Location: 'http://0.0.0.0/' }, body: Buffer.alloc(0) },
  '/long': { status: 307, headers: { Location: 'http://0.0.0.0/' }, body: LONG },
  '/oddtype': { status: 302, headers: { 'Content-Type': 'text/plain; x=\u00e9' }, body: Buffer.from('odd') },
  '/ok': { status: 200, headers: { 'Content-Type': 'text/html' }, body: Buffer.from('<b>app body</b>') },
  '/sick': { status: 500, headers: {}, body: Buffer.from('app stack trace') },
  '/busy': { status: 503, headers: {}, body: Buffer.from('app busy') },
};

let app: Running<import('node:http').Server>;
let companion: Companion;

beforeAll(async () => {
  app = await httpApp((req, res) => {
    const route = ROUTES[req.url ?? ''];
    if (route === undefined) return res.writeHead(404).end();
    res.writeHead(route.status, route.headers).end(route.body);
  });
  const entries = Object.fromEntries(
    Object.keys(ROUTES).map((path) => [path.slice(1), { httpGet: { port: app.port, path } }]),
  );
  const down = { httpGet: { port: await closedPort(), path: '/' } };
  companion = await startCompanion({ table: { liveness: { ...entries, down } } });
});

afterAll(async () => {
  await companion?.close();
  await app?.close();
});

const viaProbe = (name: string, method = 'GET') =>
  fetchRaw(companion.url('liveness', `/osm-liveness-probe/${name}`), {}, method);
const viaHeader = (name: string) =>
  fetchRaw(companion.url('healthcheck', '/osm-healthcheck'), {
    'Original-Http-Port': String(app.port),
    'Original-Http-Path': `/${name}`,
  });

describe('a Warning: the app status and body as kubelet reads them', () => {
  it.each([
    { name: 'found', body: AGNHOST_FOUND, type: 'text/html; charset=utf-8' },
    { name: 'nolocation', body: Buffer.from('no Location here'), type: 'application/octet-stream' },
    { name: 'notmodified', body: Buffer.alloc(0), type: undefined },
    { name: 'long', body: LONG.subarray(0, 10_240), type: 'application/octet-stream' },
    { name: 'oddtype', body: Buffer.from('odd'), type: 'application/octet-stream' },
  ])('$name', async ({ name, body, type }) => {
    const { status } = ROUTES[`/${name}`] ?? { status: 0 };
    for (const [route, got, label] of [
      ['probe route', await viaProbe(name), `liveness ${name}`],
      ['Original-Http-Port', await viaHeader(name), 'healthcheck'],
    ] as const) {
      expect(got.status, route).toBe(status);
      expect(got.body.equals(body), `${route}: ${got.body.length} bytes`).toBe(true);
      expect(got.headers.location, route).toBeUndefined();
      if (status !== 304) expect(got.headers['content-type'], route).toBe(type);
      expect(got.headers[REASON_HEADER.toLowerCase()], route).toMatch(
        new RegExp(`^${label}: GET http://127\\.0\\.0\\.1:${app.port}/${name} -> ${status}.* in \\d+ ms$`),
      );
    }
  });

  it('names the other host in the reason header', async () => {
    const got = await viaProbe('found');
    expect(got.headers[REASON_HEADER.toLowerCase()]).toContain(
      '-> 302 (redirect to http://0.0.0.0/ not followed: other host)',
    );
  });

  it('HEAD: the same status and reason, no body', async () => {
    const got = await viaProbe('found', 'HEAD');
    expect(got.status).toBe(302);
    expect(got.body.length).toBe(0);
    expect(got.headers[REASON_HEADER.toLowerCase()]).toContain('liveness found: GET');
  });

  it('logs the reason at warn and counts a warning', async () => {
    await viaProbe('nolocation');
    const line = companion.logs.findLast((l) => l.msg === 'probe warning' && l.container === 'nolocation');
    expect(line).toMatchObject({ level: 'warn', kind: 'liveness', target: `httpGet:${app.port}` });
    expect(String(line?.reason)).toMatch(/-> 302 \(no Location to follow\) in \d+ ms$/);
    const counted = companion.recorder
      .probeRuns()
      .find((s) => s.labels.container === 'nolocation' && s.labels.verdict === 'warning');
    expect(counted?.value).toBeGreaterThan(0);
  });
});

describe('every other outcome: our one line as the body, never the app body', () => {
  it.each([
    { name: 'ok', status: 200, line: /^liveness ok: GET http:\/\/127\.0\.0\.1:\d+\/ok -> 200 in \d+ ms\n$/ },
    { name: 'sick', status: 500, line: /^liveness sick: GET .*\/sick -> 500 in \d+ ms\n$/ },
    { name: 'busy', status: 503, line: /^liveness busy: GET .*\/busy -> 503 in \d+ ms\n$/ },
    { name: 'down', status: 503, line: /^liveness down: GET .* failed: connect ECONNREFUSED .*\n$/ },
  ])('$name', async ({ name, status, line }) => {
    const got = await viaProbe(name);
    expect(got.status).toBe(status);
    expect(got.body.toString('utf8')).toMatch(line);
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(got.headers[REASON_HEADER.toLowerCase()]).toBeUndefined();
  });
});

describe('reasonHeaderValue', () => {
  it.each([
    {
      name: 'a plain line stays',
      line: 'liveness app: GET http://a/ -> 302 in 1 ms',
      want: 'liveness app: GET http://a/ -> 302 in 1 ms',
    },
    { name: 'CR LF cannot split the header', line: 'a\r\nSet-Cookie: x', want: 'a\\u{d}\\u{a}Set-Cookie: x' },
    { name: 'non-ASCII escaped', line: 'caf\u00e9 \u2026', want: 'caf\\u{e9} \\u{2026}' },
  ])('$name', ({ line, want }) => {
    expect(reasonHeaderValue(line)).toBe(want);
  });

  it('cuts a long line to the limit, marked', () => {
    const value = reasonHeaderValue(`x${'y'.repeat(5000)}`);
    expect(value).toHaveLength(MAX_REASON_CHARS);
    expect(value.endsWith('...')).toBe(true);
  });
});
