// kubelet's own output, with and without the mesh: kubelet-http.ts (kubelet's HTTP prober, written from kubelet's
// rules apart from the companion's) probes each app directly, as kubelet does without a mesh, and through the
// companion, as kubelet does with the rewritten probe (docs/architecture.md#the-rewrite: the probe route, and osm-edge's
// Original-Http-Port route). Issue 23, from Kubernetes' e2e spec "should *not* be restarted with a non-local
// redirect http liveness probe": for a 3xx kubelet does not follow, its Warning, and so its ProbeWarning event
// and `kubectl describe`, must read the same byte for byte; for a failure, its `statuscode` text too.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApp, type Running } from '../helpers/apps.js';
import { type Companion, startCompanion } from '../helpers/companion.js';
import { type HttpAction, kubeletHttpProbe } from './kubelet-http.js';

/**
 * agnhost's `/redirect?loc=...` (test/images/agnhost/liveness/server.go): Go's http.Redirect, which for a GET
 * sets `text/html; charset=utf-8` and writes `<a href="LOC">Found</a>.` and a blank line (fmt.Fprintln).
 */
function agnhostRedirect(req: IncomingMessage, res: ServerResponse): void {
  const loc = new URL(req.url ?? '/', 'http://app').searchParams.get('loc') ?? '';
  res.writeHead(302, { Location: loc, 'Content-Type': 'text/html; charset=utf-8' });
  res.end(`<a href="${loc}">Found</a>.\n\n`);
}

/** Past 10 KiB, a two-byte character cut in half at byte 10240. */
const LONG = Buffer.concat([Buffer.alloc(10_239, 'x'), Buffer.from('é'), Buffer.alloc(100, 'y')]);

const ROUTES: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/redirect': agnhostRedirect,
  '/no-location': (_req, res) => res.writeHead(302).end('moved, but not saying where\n'),
  '/not-modified': (_req, res) => res.writeHead(304, { Location: 'http://0.0.0.0/' }).end(),
  '/long': (_req, res) => res.writeHead(307, { Location: 'http://0.0.0.0/' }).end(LONG),
  // Same host first (followed by both), then another host (not followed): the second answer's body.
  '/hop': (_req, res) =>
    res.writeHead(301, { Location: '/redirect?loc=http%3A%2F%2F0.0.0.0%2Fnext' }).end('first'),
  '/ok': (_req, res) => res.end('app body\n'),
  '/sick': (_req, res) => res.writeHead(500).end('stack trace\n'),
  '/busy': (_req, res) => res.writeHead(503).end('busy\n'),
};

const CASES = [
  {
    name: "agnhost's /redirect to http://0.0.0.0/ (the upstream spec)",
    path: `/redirect?loc=${encodeURIComponent('http://0.0.0.0/')}`,
    result: 'warning',
    output: 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n\n',
  },
  {
    name: 'a 3xx without Location, with a body',
    path: '/no-location',
    result: 'warning',
    output: 'Probe terminated redirects, Response body: moved, but not saying where\n',
  },
  {
    name: '304',
    path: '/not-modified',
    result: 'warning',
    output: 'Probe terminated redirects, Response body: ',
  },
  {
    name: 'a body past 10 KiB: exactly 10240 bytes of it',
    path: '/long',
    result: 'warning',
    output: Buffer.concat([
      Buffer.from('Probe terminated redirects, Response body: '),
      LONG.subarray(0, 10_240),
    ]),
  },
  {
    name: 'a same-host redirect, then one to another host',
    path: '/hop',
    result: 'warning',
    output: 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/next">Found</a>.\n\n',
  },
  { name: '500', path: '/sick', result: 'failure', output: 'HTTP probe failed with statuscode: 500' },
  { name: '503', path: '/busy', result: 'failure', output: 'HTTP probe failed with statuscode: 503' },
] as const;

let app: Running<import('node:http').Server>;
let companion: Companion;
const names = new Map<string, string>(CASES.map((c, i) => [c.path, `case${i}`]));

beforeAll(async () => {
  app = await httpApp((req, res) => {
    const handler = ROUTES[(req.url ?? '').split('?')[0] ?? ''];
    if (handler === undefined) res.writeHead(404).end();
    else handler(req, res);
  });
  const liveness = Object.fromEntries(
    [...CASES, { path: '/ok' }].map((c) => [
      names.get(c.path) ?? 'ok',
      { httpGet: { port: app.port, path: c.path } },
    ]),
  );
  companion = await startCompanion({ table: { liveness } });
});

afterAll(async () => {
  await companion?.close();
  await app?.close();
});

const HOST = '127.0.0.1';
const TIMEOUT_MS = 1000;
const direct = (path: string): HttpAction => ({ scheme: 'HTTP', port: app.port, path, headers: [] });
/** The rewritten probe inject writes (docs/architecture.md#the-rewrite). */
const rewritten = (path: string): HttpAction => ({
  scheme: 'HTTP',
  port: companion.ports.liveness,
  path: `/osm-liveness-probe/${names.get(path) ?? 'ok'}`,
  headers: [],
});
/** osm-edge's injector's convention for an HTTP probe. */
const osmEdge = (path: string): HttpAction => ({
  scheme: 'HTTP',
  port: companion.ports.healthcheck,
  path: '/osm-healthcheck',
  headers: [
    { name: 'Original-Http-Port', value: String(app.port) },
    { name: 'Original-Http-Path', value: path },
  ],
});

describe("kubelet's result and output: without the mesh, and through the companion", () => {
  it.each(CASES)('$name', async ({ path, result, output }) => {
    const want = { result, output: Buffer.isBuffer(output) ? output : Buffer.from(output) };
    const without = await kubeletHttpProbe(HOST, direct(path), TIMEOUT_MS);
    expect(without).toEqual(want);
    expect(await kubeletHttpProbe(HOST, rewritten(path), TIMEOUT_MS)).toEqual(without);
    expect(await kubeletHttpProbe(HOST, osmEdge(path), TIMEOUT_MS)).toEqual(without);
  });

  it('a 2xx: the same result; kubelet keeps its output to itself (no event), and ours is the one line', async () => {
    const without = await kubeletHttpProbe(HOST, direct('/ok'), TIMEOUT_MS);
    const through = await kubeletHttpProbe(HOST, rewritten('/ok'), TIMEOUT_MS);
    expect(without).toEqual({ result: 'success', output: Buffer.from('app body\n') });
    expect(through.result).toBe('success');
    expect(through.output.toString()).toMatch(
      /^liveness ok: GET http:\/\/127\.0\.0\.1:\d+\/ok -> 200 in \d+ ms\n$/,
    );
  });
});
