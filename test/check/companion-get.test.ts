// askCompanion against real peers on loopback: what it sends (kubelet's headers), how it judges the answer
// (kubelet's rule), what it keeps of the body, and how it fails: slow, garbled, refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askCompanion } from '../../src/check/companion-get.js';
import { closedPort, httpApp, type Running, tcpApp } from '../helpers/apps.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';

const apps: Array<Running<unknown>> = [];
let http: number;
let garbled: number;

beforeAll(async () => {
  const app = await httpApp((req, res) => {
    const seen = `ua=${req.headers['user-agent']} accept=${req.headers.accept} connection=${req.headers.connection} tcp=${req.headers['original-tcp-port']}`;
    if (req.url === '/headers') return res.end(`${seen}\n`);
    if (req.url === '/moved')
      return res
        .writeHead(302, { 'Osm-Healthcheck-Reason': 'readiness app: -> 302 (redirect not followed)' })
        .end('<a href="http://0.0.0.0/">Found</a>.\n\n');
    // A companion from before the reason header: its line is the body.
    if (req.url === '/moved-before') return res.writeHead(302).end('readiness app: -> 302\n');
    if (req.url === '/empty') return res.writeHead(503).end();
    if (req.url === '/large') return res.end('a'.repeat(20_000));
    if (req.url === '/hang') return;
    res.writeHead(404).end('no such path\n');
  });
  const bad = await tcpApp((socket) => socket.end('hello\r\n\r\n'));
  apps.push(app, bad);
  http = app.port;
  garbled = bad.port;
});

afterAll(async () => {
  for (const app of apps) await app.close();
});

const get = (path: string, headers: Array<{ name: string; value: string }> = []) => ({
  port: http,
  path,
  headers,
});

describe('askCompanion', () => {
  it("sends kubelet's headers and the rewritten probe's own", async () => {
    const answer = await askCompanion(
      '127.0.0.1',
      get('/headers', [{ name: 'Original-Tcp-Port', value: '5432' }]),
      1000,
    );
    expect(answer).toEqual({
      verdict: 'success',
      status: 200,
      reason: 'ua=kube-probe/1.30 accept=*/* connection=close tcp=5432',
      kubeletWarning: null,
    });
  });

  it.each([
    {
      name: "3xx: Warning, the reason from its header, kubelet's text from the app's body",
      path: '/moved',
      verdict: 'warning',
      status: 302,
      reason: 'readiness app: -> 302 (redirect not followed)',
      kubeletWarning: 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n\n',
    },
    {
      name: '3xx without the reason header: the body is the reason',
      path: '/moved-before',
      verdict: 'warning',
      status: 302,
      reason: 'readiness app: -> 302',
      kubeletWarning: 'Probe terminated redirects, Response body: readiness app: -> 302\n',
    },
    {
      name: '404: Failure with the body',
      path: '/nope',
      verdict: 'failure',
      status: 404,
      reason: 'no such path',
    },
    {
      name: 'an empty body: the status',
      path: '/empty',
      verdict: 'failure',
      status: 503,
      reason: 'HTTP 503',
    },
    {
      name: 'a long body: its first 10 KiB',
      path: '/large',
      verdict: 'success',
      status: 200,
      reason: 'a'.repeat(10_240),
    },
  ])(
    'judges the answer as kubelet does: $name',
    async ({ path, verdict, status, reason, kubeletWarning = null }) => {
      expect(await askCompanion('127.0.0.1', get(path), 1000)).toEqual({
        verdict,
        status,
        reason,
        kubeletWarning,
      });
    },
  );

  it.each([
    { name: 'no answer in time', port: () => http, path: '/hang', reason: /failed: timeout after 200 ms$/ },
    {
      name: 'not HTTP',
      port: () => garbled,
      path: '/',
      reason: /failed: invalid HTTP response \(/,
    },
  ])('fails: $name', async ({ port, path, reason }) => {
    const started = performance.now();
    const answer = await askCompanion('127.0.0.1', { port: port(), path, headers: [] }, 200);
    expect(performance.now() - started).toBeLessThan(200 + BUSY_MACHINE_SLACK_MS);
    expect(answer).toMatchObject({ verdict: 'failure', status: null, reason: expect.stringMatching(reason) });
  });

  it('fails a refused connection and asks whether the companion runs', async () => {
    const port = await closedPort();
    expect(
      await askCompanion('127.0.0.1', { port, path: '/osm-liveness-probe/app', headers: [] }, 1000),
    ).toEqual({
      verdict: 'failure',
      status: null,
      reason: `GET http://127.0.0.1:${port}/osm-liveness-probe/app failed: connect ECONNREFUSED 127.0.0.1:${port} (is the companion running?)`,
      kubeletWarning: null,
    });
  });
});
