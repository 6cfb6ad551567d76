// probeHttp against real loopback servers: kubelet's verdicts for every status, redirects, Kubernetes' header
// tables, the one deadline, transport failures, body limits, HTTPS over HTTP/1.1 and HTTP/2, and IPv6.

import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { probeHttp } from '../../src/probe/http.js';
import type { HttpSpec } from '../../src/probe/http-request.js';
import type { ProbeResult } from '../../src/probe/result.js';
import { DEFAULT_USER_AGENT } from '../../src/scheme.js';
import type { HttpHeader } from '../../src/table/types.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import {
  closeServers,
  h2Peer,
  hasIpv6Loopback,
  httpPeer,
  httpsPeer,
  rawPeer,
  silentPeer,
} from './http-servers.js';

const TARGET = { host: '127.0.0.1', timeoutMs: 5000 };
/** Short budget for the cases that must time out; their servers never answer, so no race with the clock. */
const SHORT = { host: '127.0.0.1', timeoutMs: 300 };

function spec(
  port: number,
  path = '/',
  httpHeaders: HttpHeader[] = [],
  scheme: 'HTTP' | 'HTTPS' = 'HTTP',
): HttpSpec {
  return { scheme, port, path, httpHeaders };
}

/** Asserts the message shape; `{ms}` stands for `<n> ms`. */
function expectMessage(result: ProbeResult, shape: string): void {
  const pattern = shape
    .split('{ms}')
    .map((part) => part.replace(/[.*+?^$()[\]{}|\\/]/g, '\\$&'))
    .join('\\d+ ms');
  expect(result.message).toMatch(new RegExp(`^${pattern}$`));
}

/** A raw HTTP/1.1 response that closes the connection. */
function reply(socket: Socket, status: number, headers: string[] = [], body = ''): void {
  const head = [
    `HTTP/1.1 ${status} X`,
    ...headers,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

let cert: TestCert;
beforeAll(() => {
  cert = makeTestCert();
});
afterAll(() => cert.cleanup());
afterEach(closeServers);

describe('status codes', () => {
  it.each([
    { name: '200', status: 200, verdict: 'success', answered: 200 },
    { name: '204', status: 204, verdict: 'success', answered: 204 },
    { name: '299', status: 299, verdict: 'success', answered: 299 },
    { name: '300', status: 300, verdict: 'warning', answered: 300 },
    {
      name: '301 without Location',
      status: 301,
      verdict: 'warning',
      answered: 301,
      note: ' (no Location to follow)',
    },
    { name: '304', status: 304, verdict: 'warning', answered: 304 },
    { name: '399', status: 399, verdict: 'warning', answered: 399 },
    { name: '400', status: 400, verdict: 'failure', answered: 400 },
    { name: '404', status: 404, verdict: 'failure', answered: 404 },
    { name: '500', status: 500, verdict: 'failure', answered: 500 },
    { name: '503', status: 503, verdict: 'failure', answered: 503 },
    { name: '599', status: 599, verdict: 'failure', answered: 599 },
  ])('$name', async ({ status, verdict, answered, note = '' }) => {
    const app = await httpPeer((_req, res) => res.writeHead(status).end());
    const result = await probeHttp(spec(app.port, '/live'), TARGET);
    expect(result).toMatchObject({ verdict, status: answered });
    // A failure by status is counted as one (docs/metrics.md#failure-reasons).
    expect('reason' in result ? result.reason : undefined).toBe(verdict === 'failure' ? 'status' : undefined);
    expectMessage(result, `GET http://127.0.0.1:${app.port}/live -> ${status}${note} in {ms}`);
    await app.idle();
  });

  it('sweeps 100-599 the way kubelet judges them', async () => {
    const app = await rawPeer((socket, head) => reply(socket, Number(/GET \/(\d+)/.exec(head)?.[1])));
    const wrong: string[] = [];
    for (let code = 100; code < 600; code++) {
      const { verdict, status } = await probeHttp(spec(app.port, `/${code}`), TARGET);
      // kubelet: 2xx Success, a 3xx that reached it Warning, else Failure; a final 1xx cannot be relayed.
      const want =
        code < 200
          ? 'failure 503'
          : code < 300
            ? `success ${code}`
            : code < 400
              ? `warning ${code}`
              : `failure ${code}`;
      if (`${verdict} ${status}` !== want) wrong.push(`${code}: got ${verdict} ${status}, want ${want}`);
    }
    expect(wrong).toEqual([]);
  });

  it('skips 100 Continue and 103 Early Hints and judges the final answer', async () => {
    const app = await rawPeer((socket) => {
      socket.write(
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n',
      );
      reply(socket, 200, [], 'ok');
    });
    const result = await probeHttp(spec(app.port, '/live'), TARGET);
    expect(result).toMatchObject({ verdict: 'success', status: 200 });
  });

  it('fails an unasked-for 101 Switching Protocols with 503', async () => {
    const app = await rawPeer((socket) =>
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n'),
    );
    const result = await probeHttp(spec(app.port, '/live'), TARGET);
    expect(result).toMatchObject({ verdict: 'failure', status: 503 });
    expectMessage(result, `GET http://127.0.0.1:${app.port}/live -> 101 in {ms}`);
    await app.idle();
  });
});

describe('redirects', () => {
  it.each(
    [301, 302, 303, 307, 308].flatMap((code) => [
      { name: `${code} to /new answering 200 succeeds`, code, final: 200, verdict: 'success' },
      { name: `${code} to /new answering 500 fails`, code, final: 500, verdict: 'failure' },
    ]),
  )('$name', async ({ code, final, verdict }) => {
    const app = await httpPeer((req, res) =>
      req.url === '/' ? res.writeHead(code, { Location: '/new' }).end() : res.writeHead(final).end(),
    );
    const result = await probeHttp(spec(app.port), TARGET);
    expect(result).toMatchObject({ verdict, status: final });
    const base = `http://127.0.0.1:${app.port}`;
    expectMessage(result, `GET ${base}/ -> ${final} (after 1 redirect, at ${base}/new) in {ms}`);
  });

  it.each([
    { name: '9 hops then 200 succeed', hops: 9, verdict: 'success', status: 200 },
    { name: '10 hops fail: the 10th redirect is refused', hops: 10, verdict: 'failure', status: 503 },
  ])('$name', async ({ hops, verdict, status }) => {
    const app = await httpPeer((req, res) => {
      const left = Number(req.url?.split('/')[2]);
      if (left === 0) res.writeHead(200).end();
      else res.writeHead(302, { Location: `/hop/${left - 1}` }).end();
    });
    const result = await probeHttp(spec(app.port, `/hop/${hops}`), TARGET);
    expect(result).toMatchObject({ verdict, status });
    const base = `http://127.0.0.1:${app.port}`;
    if (verdict === 'success') expect(app.seen).toHaveLength(10);
    else
      expectMessage(
        result,
        `GET ${base}/hop/10 failed: stopped after 10 redirects (last: ${base}/hop/0) after {ms}`,
      );
  });

  it('fails a redirect loop', async () => {
    const app = await httpPeer((_req, res) => res.writeHead(302, { Location: '/loop' }).end());
    const result = await probeHttp(spec(app.port, '/loop'), TARGET);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason: 'redirect' });
    expect(result.message).toContain('stopped after 10 redirects');
  });

  it.each([
    { name: 'bogus nonlocal http://0.0.0.0/fail', location: () => 'http://0.0.0.0/fail' },
    { name: 'localhost is not 127.0.0.1', location: (port: number) => `http://localhost:${port}/success` },
    { name: 'scheme-relative //example.invalid/x', location: () => '//example.invalid/x' },
  ])('does not follow a redirect to another host: $name', async ({ location }) => {
    // A live server behind the localhost case, so following it by mistake would succeed.
    const other = await httpPeer((_req, res) => res.writeHead(200).end());
    const target = location(other.port);
    const app = await httpPeer((_req, res) => res.writeHead(302, { Location: target }).end());
    const result = await probeHttp(spec(app.port, '/a'), TARGET);
    expect(result).toMatchObject({ verdict: 'warning', status: 302 });
    const shown = new URL(target, 'http://127.0.0.1/').href;
    expectMessage(
      result,
      `GET http://127.0.0.1:${app.port}/a -> 302 (redirect to ${shown} not followed: other host) in {ms}`,
    );
    expect(other.seen).toEqual([]);
  });

  it.each([
    { name: 'other port /success succeeds', path: '/success', verdict: 'success', status: 200 },
    { name: 'other port /fail fails', path: '/fail', verdict: 'failure', status: 500 },
  ])('follows a redirect to the same host: $name', async ({ path, verdict, status }) => {
    const other = await httpPeer((req, res) => res.writeHead(req.url === '/success' ? 200 : 500).end());
    const app = await httpPeer((_req, res) =>
      res.writeHead(302, { Location: `http://127.0.0.1:${other.port}${path}` }).end(),
    );
    expect(await probeHttp(spec(app.port, '/redirect'), TARGET)).toMatchObject({ verdict, status });
  });

  it('follows a relative Location against the current path, query kept', async () => {
    const app = await httpPeer((req, res) =>
      req.url === '/dir/old' ? res.writeHead(301, { Location: 'new?x=1' }).end() : res.writeHead(200).end(),
    );
    const result = await probeHttp(spec(app.port, '/dir/old'), TARGET);
    expect(result).toMatchObject({ verdict: 'success', status: 200 });
    expect(app.seen.map((s) => s.url)).toEqual(['/dir/old', '/dir/new?x=1']);
  });

  it('follows http to https on the same host', async () => {
    const secure = await httpsPeer(cert, (_req, res) => res.writeHead(200).end());
    const app = await httpPeer((_req, res) =>
      res.writeHead(307, { Location: `https://127.0.0.1:${secure.port}/tls` }).end(),
    );
    expect(await probeHttp(spec(app.port), TARGET)).toMatchObject({ verdict: 'success', status: 200 });
  });

  it.each([
    { name: '3xx without Location', status: 302, headers: {}, note: ' (no Location to follow)' },
    {
      name: '308 to /new answering 308 again without Location',
      status: 308,
      headers: {},
      note: ' (no Location to follow)',
    },
    { name: '304 Not Modified', status: 304, headers: { Location: '/x' }, note: '' },
    { name: '300 Multiple Choices', status: 300, headers: { Location: '/x' }, note: '' },
  ])('returns $name as a warning', async ({ status, headers, note }) => {
    const app = await httpPeer((_req, res) => res.writeHead(status, headers).end());
    const result = await probeHttp(spec(app.port, '/r'), TARGET);
    expect(result).toMatchObject({ verdict: 'warning', status });
    expectMessage(result, `GET http://127.0.0.1:${app.port}/r -> ${status}${note} in {ms}`);
    expect(app.seen).toHaveLength(1);
  });

  it.each([
    { name: 'kept after a relative redirect', location: () => '/success', host: 'www.success.com' },
    {
      name: 'dropped after an absolute one (Go)',
      location: (p: number) => `http://127.0.0.1:${p}/success`,
      host: '',
    },
  ])('Host override is $name', async ({ location, host }) => {
    let port = 0;
    const app = await httpPeer((req, res) =>
      req.url === '/redirect'
        ? res.writeHead(302, { Location: location(port) }).end()
        : res.writeHead(200).end(),
    );
    port = app.port;
    const headers = [{ name: 'Host', value: 'www.success.com' }];
    expect(await probeHttp(spec(app.port, '/redirect', headers), TARGET)).toMatchObject({
      verdict: 'success',
    });
    const hostSeen = app.seen.map((s) => s.headers.find(([name]) => name === 'Host')?.[1]);
    expect(hostSeen).toEqual(['www.success.com', host || `127.0.0.1:${app.port}`]);
  });

  it('sends Referer and the table headers on a followed redirect', async () => {
    const app = await httpPeer((req, res) =>
      req.url === '/a' ? res.writeHead(302, { Location: '/b' }).end() : res.writeHead(200).end(),
    );
    await probeHttp(spec(app.port, '/a', [{ name: 'X-Probe', value: '1' }]), TARGET);
    const second = Object.fromEntries(app.seen[1]?.headers ?? []);
    expect(second).toMatchObject({ Referer: `http://127.0.0.1:${app.port}/a`, 'X-Probe': '1' });
  });
});

describe('one deadline covers every stage', () => {
  it('fails an app that accepts and never answers, and closes the connection', async () => {
    const app = await silentPeer();
    const started = performance.now();
    const result = await probeHttp(spec(app.port, '/live'), SHORT);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason: 'timeout' });
    expectMessage(
      result,
      `GET http://127.0.0.1:${app.port}/live failed: timeout after 300 ms waiting for response headers`,
    );
    expect(performance.now() - started).toBeLessThan(300 + BUSY_MACHINE_SLACK_MS);
    await app.idle();
  });

  it('fails headers sent at once with the body after the timeout', async () => {
    const app = await rawPeer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    const result = await probeHttp(spec(app.port, '/live'), SHORT);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason: 'timeout' });
    expect(result.message).toMatch(/failed: timeout after 300 ms waiting for body$/);
    await app.idle();
  });

  it('fails a TLS port that never finishes the handshake', async () => {
    const app = await silentPeer();
    const result = await probeHttp(spec(app.port, '/live', [], 'HTTPS'), SHORT);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason: 'timeout' });
    expect(result.message).toMatch(/failed: timeout after 300 ms waiting for TLS handshake$/);
    await app.idle();
  });

  it('counts the time spent on redirects', async () => {
    const app = await httpPeer((req, res) => {
      if (req.url === '/a') res.writeHead(302, { Location: '/slow' }).end();
    });
    const result = await probeHttp(spec(app.port, '/a'), SHORT);
    const base = `http://127.0.0.1:${app.port}`;
    const where = `(at ${base}/slow, after 1 redirect)`;
    expectMessage(result, `GET ${base}/a failed: timeout after 300 ms waiting for response headers ${where}`);
  });

  it("drains a redirect's body first, as Go does: a redirect whose body never comes times out", async () => {
    const app = await rawPeer((socket) => socket.write('HTTP/1.1 302 Found\r\nLocation: /b\r\n\r\n'));
    const result = await probeHttp(spec(app.port, '/a'), SHORT);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason: 'timeout' });
    expect(result.message).toMatch(/failed: timeout after 300 ms waiting for redirect body$/);
    await app.idle();
  });
});

describe('transport failures answer 503', () => {
  it('connection refused', async () => {
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const result = await probeHttp(spec(port, '/live'), TARGET);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason: 'refused' });
    expectMessage(
      result,
      `GET http://127.0.0.1:${port}/live failed: connect ECONNREFUSED 127.0.0.1:${port} after {ms}`,
    );
  });

  it.each([
    {
      name: 'reset',
      act: (s: Socket) => s.resetAndDestroy(),
      message: /failed: read ECONNRESET after/,
      reason: 'reset',
    },
    {
      name: 'closed without a word',
      act: (s: Socket) => s.end(),
      message: /failed: socket hang up after/,
      reason: 'reset',
    },
    {
      name: 'not HTTP',
      act: (s: Socket) => s.end('SSH-2.0-OpenSSH\r\n'),
      message: /failed: invalid HTTP response/,
      reason: 'other',
    },
    {
      name: 'body cut short',
      act: (s: Socket) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort'),
      message: /failed: (body read failed|connection closed while reading the body)/,
      reason: 'reset',
    },
  ])('$name', async ({ act, message, reason }) => {
    const app = await rawPeer((socket) => act(socket));
    const result = await probeHttp(spec(app.port, '/live'), TARGET);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason });
    expect(result.message).toMatch(message);
  });

  it('an HTTP probe against a TLS port', async () => {
    const app = await httpsPeer(cert, (_req, res) => res.writeHead(200).end());
    // The TLS server drops a connection that starts with plain HTTP: no handshake of the probe's failed.
    expect(await probeHttp(spec(app.port), TARGET)).toMatchObject({
      verdict: 'failure',
      status: 503,
      reason: 'reset',
    });
  });

  it('an HTTPS probe against a plain HTTP port', async () => {
    const app = await httpPeer((_req, res) => res.writeHead(200).end());
    const result = await probeHttp(spec(app.port, '/', [], 'HTTPS'), TARGET);
    expect(result).toMatchObject({ verdict: 'failure', status: 503, reason: 'tls' });
    expect(result.message).toMatch(/failed: TLS error: /);
  });
});

describe('body: at most 10 KiB is read', () => {
  it.each([
    { name: 'empty', size: 0 },
    { name: 'exactly 10240 bytes', size: 10240 },
    { name: '10241 bytes', size: 10241 },
    { name: '1 MiB', size: 1 << 20 },
  ])('$name succeeds', async ({ size }) => {
    const app = await httpPeer((_req, res) => res.writeHead(200).end(Buffer.alloc(size, 'a')));
    expect(await probeHttp(spec(app.port), TARGET)).toMatchObject({ verdict: 'success', status: 200 });
    await app.idle();
  });

  it('stops reading an endless body and closes the connection', async () => {
    const chunk = Buffer.alloc(16 * 1024, 'a');
    const app = await httpPeer((_req, res) => {
      res.writeHead(200);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    });
    expect(await probeHttp(spec(app.port), TARGET)).toMatchObject({ verdict: 'success', status: 200 });
    await app.idle();
  });
});

describe("a Warning carries the app's body as kubelet reads it", () => {
  /** The body bytes of a Warning, or a note that there was no Warning. */
  const bodyOf = (result: ProbeResult) =>
    result.verdict === 'warning' ? result.appBody : `no warning: ${result.verdict}`;
  const big = Buffer.concat([Buffer.alloc(10_239, 'x'), Buffer.from('é…')]);

  it.each([
    {
      name: "agnhost's /redirect to http://0.0.0.0/ (Go's http.Redirect)",
      status: 302,
      headers: { Location: 'http://0.0.0.0/', 'Content-Type': 'text/html; charset=utf-8' },
      body: Buffer.from('<a href="http://0.0.0.0/">Found</a>.\n\n'),
      want: Buffer.from('<a href="http://0.0.0.0/">Found</a>.\n\n'),
      contentType: 'text/html; charset=utf-8',
    },
    {
      name: '3xx without Location',
      status: 301,
      headers: {},
      body: Buffer.from('moved, somewhere'),
      want: Buffer.from('moved, somewhere'),
      contentType: undefined,
    },
    {
      name: '300 Multiple Choices',
      status: 300,
      headers: { Location: '/a', 'Content-Type': 'application/json' },
      body: Buffer.from('{"versions": []}'),
      want: Buffer.from('{"versions": []}'),
      contentType: 'application/json',
    },
    {
      name: '304: no body by definition',
      status: 304,
      headers: {},
      body: Buffer.alloc(0),
      want: Buffer.alloc(0),
      contentType: undefined,
    },
    {
      name: 'longer than 10 KiB: the first 10240 bytes, a character cut in half kept as bytes',
      status: 302,
      headers: { Location: 'http://0.0.0.0/' },
      body: big,
      want: big.subarray(0, 10_240),
      contentType: undefined,
    },
  ])('$name', async ({ status, headers, body, want, contentType }) => {
    const app = await httpPeer((_req, res) => res.writeHead(status, headers).end(body));
    const result = await probeHttp(spec(app.port, '/redirect'), TARGET);
    expect(result).toMatchObject({ verdict: 'warning', status });
    expect(bodyOf(result)).toEqual({ bytes: want, contentType });
    await app.idle();
  });

  it('over HTTP/2 too', async () => {
    const app = await h2Peer(cert, (_req, res) =>
      res.writeHead(302, { location: 'http://0.0.0.0/', 'content-type': 'text/plain' }).end('gone'),
    );
    const result = await probeHttp(spec(app.port, '/', [], 'HTTPS'), TARGET);
    expect(bodyOf(result)).toEqual({ bytes: Buffer.from('gone'), contentType: 'text/plain' });
    await app.idle();
  });

  it('the last answer of followed redirects', async () => {
    const app = await httpPeer((req, res) =>
      req.url === '/a'
        ? res.writeHead(302, { Location: '/b' }).end('first')
        : res.writeHead(307, { Location: 'http://0.0.0.0/' }).end('second'),
    );
    const result = await probeHttp(spec(app.port, '/a'), TARGET);
    expect(bodyOf(result)).toEqual({ bytes: Buffer.from('second'), contentType: undefined });
  });
});

/** Header names and values the server received, in wire order. */
async function headersSeen(httpHeaders: HttpHeader[], userAgent?: string): Promise<[string, string][]> {
  const app = await httpPeer((_req, res) => res.writeHead(200).end());
  expect(await probeHttp(spec(app.port, '/', httpHeaders), TARGET, userAgent)).toMatchObject({
    verdict: 'success',
  });
  return app.seen[0]?.headers ?? [];
}

describe("request headers (Kubernetes' tables)", () => {
  it('sends exactly Host, User-Agent, Accept and Connection by default', async () => {
    const seen = await headersSeen([]);
    expect(seen).toEqual([
      ['Host', expect.stringMatching(/^127\.0\.0\.1:\d+$/)],
      ['User-Agent', DEFAULT_USER_AGENT],
      ['Accept', '*/*'],
      ['Connection', 'close'],
    ]);
  });

  it.each([
    {
      name: 'Accept-Encoding gzip echoed',
      given: [['Accept-Encoding', 'gzip']],
      has: [['Accept-Encoding', 'gzip']],
    },
    {
      name: 'Accept-Encoding foo echoed',
      given: [['Accept-Encoding', 'foo']],
      has: [['Accept-Encoding', 'foo']],
    },
    { name: 'Accept-Encoding "" echoed', given: [['Accept-Encoding', '']], has: [['Accept-Encoding', '']] },
    {
      name: 'custom header, name canonicalised',
      given: [['x-muffins-or-cupcakes', 'muffins']],
      has: [['X-Muffins-Or-Cupcakes', 'muffins']],
    },
    { name: 'User-Agent foo/1.0', given: [['User-Agent', 'foo/1.0']], has: [['User-Agent', 'foo/1.0']] },
    { name: 'User-Agent "" sends none', given: [['User-Agent', '']], lacks: 'User-Agent' },
    { name: 'Accept text/html', given: [['Accept', 'text/html']], has: [['Accept', 'text/html']] },
    { name: 'Accept "" sends none', given: [['accept', '']], lacks: 'Accept' },
    {
      name: 'Host muffins.cupcakes.org',
      given: [['Host', 'muffins.cupcakes.org']],
      has: [['Host', 'muffins.cupcakes.org']],
    },
    {
      name: 'repeated names keep every value',
      given: [
        ['X-A', '1'],
        ['x-a', '2'],
      ],
      has: [
        ['X-A', '1'],
        ['X-A', '2'],
      ],
    },
    {
      name: 'Connection keep-alive still closes',
      given: [['Connection', 'keep-alive']],
      has: [
        ['Connection', 'keep-alive'],
        ['Connection', 'close'],
      ],
    },
    { name: 'no Accept-Encoding unless given', given: [], lacks: 'Accept-Encoding' },
  ])('$name', async ({ given, has = [], lacks }) => {
    const seen = await headersSeen(given.map(([name = '', value = '']) => ({ name, value })));
    for (const pair of has) expect(seen).toContainEqual(pair);
    if (lacks !== undefined) expect(seen.map(([name]) => name)).not.toContain(lacks);
  });

  it("forwards kubelet's own User-Agent", async () => {
    expect(await headersSeen([], 'kube-probe/1.31')).toContainEqual(['User-Agent', 'kube-probe/1.31']);
  });

  it('keeps the query string', async () => {
    const app = await httpPeer((_req, res) => res.writeHead(200).end());
    await probeHttp(spec(app.port, '/ready?verbose=1&x=%20y'), TARGET);
    expect(app.seen[0]?.url).toBe('/ready?verbose=1&x=%20y');
  });
});

describe('HTTPS: certificate not verified, HTTP/2 when offered', () => {
  it('speaks HTTP/1.1 to a self-signed server without ALPN, sending no SNI', async () => {
    const app = await httpsPeer(cert, (_req, res) => res.writeHead(200).end());
    const result = await probeHttp(spec(app.port, '/live', [], 'HTTPS'), TARGET);
    expect(result).toMatchObject({ verdict: 'success', status: 200 });
    expectMessage(result, `GET https://127.0.0.1:${app.port}/live -> 200 in {ms}`);
    expect(app.seen[0]?.httpVersion).toBe('1.1');
    expect(app.servernames).toEqual([false]);
  });

  it.each([
    { name: '200', status: 200, verdict: 'success' },
    { name: '503', status: 503, verdict: 'failure' },
    { name: '302 without Location', status: 302, verdict: 'warning' },
  ])('speaks HTTP/2 to an h2-only server: $name', async ({ status, verdict }) => {
    const app = await h2Peer(cert, (_req, res) => res.writeHead(status).end('x'.repeat(20_000)));
    const result = await probeHttp(
      spec(app.port, '/live?q=1', [{ name: 'X-Probe', value: '1' }], 'HTTPS'),
      TARGET,
    );
    expect(result).toMatchObject({ verdict, status });
    expect(app.seen[0]).toMatchObject({ url: '/live?q=1', httpVersion: '2.0' });
    const names = app.seen[0]?.headers.map(([name]) => name);
    expect(names).toEqual(expect.arrayContaining([':authority', 'user-agent', 'accept', 'x-probe']));
    expect(names).not.toContain('connection');
    await app.idle();
  });

  it('follows a same-host redirect over HTTP/2, Host override as :authority', async () => {
    const app = await h2Peer(cert, (req, res) =>
      req.url === '/a' ? res.writeHead(302, { location: '/b' }).end() : res.writeHead(200).end(),
    );
    const headers = [{ name: 'Host', value: 'app.example' }];
    const result = await probeHttp(spec(app.port, '/a', headers, 'HTTPS'), TARGET);
    expect(result).toMatchObject({ verdict: 'success', status: 200 });
    const authorities = app.seen.map((s) => s.headers.find(([name]) => name === ':authority')?.[1]);
    expect(authorities).toEqual(['app.example', 'app.example']);
  });

  it('times out an HTTP/2 server that never answers', async () => {
    const app = await h2Peer(cert, () => {});
    const result = await probeHttp(spec(app.port, '/live', [], 'HTTPS'), SHORT);
    expect(result).toMatchObject({ verdict: 'failure', status: 503 });
    expect(result.message).toMatch(/timeout after 300 ms waiting for response headers$/);
    await app.idle();
  });
});

const ipv6 = await hasIpv6Loopback();

describe('IPv6', () => {
  it.skipIf(!ipv6)(`probes [::1]${ipv6 ? '' : ' (skipped: this machine has no ::1)'}`, async () => {
    const app = await httpPeer(
      (req, res) => res.writeHead(req.url === '/a' ? 302 : 200, { Location: '/b' }).end(),
      '::1',
    );
    const result = await probeHttp(spec(app.port, '/a'), { host: '::1', timeoutMs: 5000 });
    expect(result).toMatchObject({ verdict: 'success', status: 200 });
    const base = `http://[::1]:${app.port}`;
    expectMessage(result, `GET ${base}/a -> 200 (after 1 redirect, at ${base}/b) in {ms}`);
    expect(app.seen[0]?.headers).toContainEqual(['Host', `[::1]:${app.port}`]);
  });
});

describe('clean up', () => {
  it('leaves no socket, session or timer behind, whatever the outcome', async () => {
    const ok = await httpPeer((_req, res) => res.writeHead(200).end());
    const silent = await silentPeer();
    const h2 = await h2Peer(cert, (_req, res) => res.writeHead(200).end());
    const count = (name: string) => process.getActiveResourcesInfo().filter((held) => held === name).length;
    const timers = count('Timeout');
    await probeHttp(spec(ok.port), TARGET);
    await probeHttp(spec(silent.port), SHORT);
    await probeHttp(spec(h2.port, '/', [], 'HTTPS'), TARGET);
    await Promise.all([ok.idle(), silent.idle(), h2.idle()]);
    expect(count('Timeout')).toBeLessThanOrEqual(timers);
    // A socket's handle closes a tick after its 'close' event: wait for that, not for a guessed delay.
    await vi.waitFor(() =>
      expect(['TCPSocketWrap', 'TLSWrap', 'Http2Session'].map(count)).toEqual([0, 0, 0]),
    );
  });
});
