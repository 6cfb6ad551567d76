// The route layer on bare node:http: path matching as a table, and over real sockets the HTTP details a
// framework used to provide (HEAD, query strings, bodies, Content-Length, exact paths, the failure log budget).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchPath } from '../../src/server/routing.js';
import { closedPort, httpApp, type Running } from '../helpers/apps.js';
import { get, raw } from '../helpers/client.js';
import { type Companion, startCompanion } from '../helpers/companion.js';
import { pastFreshWindow } from '../helpers/next-check.js';

describe('matchPath', () => {
  it.each([
    { name: 'healthcheck', path: '/osm-healthcheck', want: { route: 'healthcheck' } },
    { name: 'healthz', path: '/healthz', want: { route: 'healthz' } },
    {
      name: 'bare probe path',
      path: '/osm-readiness-probe',
      want: { route: 'probe', kind: 'readiness', container: undefined },
    },
    {
      name: 'probe path with container',
      path: '/osm-startup-probe/web',
      want: { route: 'probe', kind: 'startup', container: 'web' },
    },
    { name: 'trailing slash', path: '/osm-healthcheck/', want: undefined },
    { name: 'empty container', path: '/osm-liveness-probe/', want: undefined },
    { name: 'extra segment', path: '/osm-liveness-probe/app/x', want: undefined },
    { name: 'other case', path: '/OSM-healthcheck', want: undefined },
    { name: 'unknown kind', path: '/osm-warmup-probe/app', want: undefined },
    { name: 'root', path: '/', want: undefined },
  ])('$name', ({ path, want }) => {
    expect(matchPath(path)).toEqual(want);
  });
});

let web: Running<import('node:http').Server>;
let refused: number;
let companion: Companion;

beforeAll(async () => {
  web = await httpApp((_req, res) => res.end('ok'));
  refused = await closedPort();
  companion = await startCompanion({
    table: {
      liveness: { app: { httpGet: { port: web.port, path: '/live' } } },
      readiness: { db: { tcpSocket: { port: refused } } },
    },
  });
});

afterAll(async () => {
  await companion.close();
  await web.close();
});

const request = (port: number, head: string) => raw(port, `${head}\r\nHost: x\r\nConnection: close\r\n\r\n`);

describe('HTTP details', () => {
  it('answers HEAD like GET, with the length of the body it leaves out', async () => {
    const text = await request(companion.ports.liveness, 'HEAD /osm-liveness-probe/app HTTP/1.1');
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1]);
    expect(length).toBeGreaterThan(0);
    expect(text.endsWith('\r\n\r\n')).toBe(true);
  });

  it('ignores the query string', async () => {
    expect((await get(companion.url('liveness', '/osm-liveness-probe/app?verbose=1'))).status).toBe(200);
  });

  it('answers a plain-text line with its Content-Length', async () => {
    const answer = await get(companion.url('healthcheck', '/healthz'));
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)));
  });

  it('closes the connection after answering a request that sent a body, without reading it', async () => {
    const text = await raw(
      companion.ports.liveness,
      'POST /osm-liveness-probe/app HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial',
    );
    expect(text).toMatch(/^HTTP\/1\.1 405 /);
    expect(text).toMatch(/connection: close/i);
  });

  it('answers one request per connection and closes it, as kubelet uses them: a pipelined second gets nothing', async () => {
    const two = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    const text = await raw(companion.ports.healthcheck, two);
    expect(text.match(/HTTP\/1\.1 200 /g)).toHaveLength(1);
    expect(text).toMatch(/connection: close/i);
  });

  it('logs each failed probe while under the per-second budget', async () => {
    const before = companion.logs.filter((l) => l.msg === 'probe failed').length;
    for (let i = 0; i < 3; i++) {
      await pastFreshWindow();
      expect((await get(companion.url('readiness', '/osm-readiness-probe/db'))).status).toBe(503);
    }
    expect(companion.logs.filter((l) => l.msg === 'probe failed').length - before).toBe(3);
  });
});
