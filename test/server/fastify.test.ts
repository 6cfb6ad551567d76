// The companion's requests are Fastify's: each answered by a Fastify route, seen through Fastify's own diagnostics
// channel (tracing:fastify.request.handler), on all four listeners.

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ListenerRole } from '../../src/scheme.js';
import { closedPort, httpApp, type Running } from '../helpers/apps.js';
import { get } from '../helpers/client.js';
import { type Companion, startCompanion } from '../helpers/companion.js';

const CHANNEL = 'tracing:fastify.request.handler:start';
interface Handled {
  route: { url: string; method: string };
  request: { raw: { socket: import('node:net').Socket } };
}

let web: Running<import('node:http').Server>;
let companion: Companion;
const seen: Array<{ role: ListenerRole | undefined; route: string }> = [];
const onStart = (message: unknown) => {
  const { route, request } = message as Handled;
  seen.push({ role: companion.listeners.roleOf(request.raw.socket), route: `${route.method} ${route.url}` });
};

beforeAll(async () => {
  web = await httpApp((_req, res) => res.end('ok'));
  const refused = await closedPort();
  companion = await startCompanion({
    table: {
      liveness: { app: { httpGet: { port: web.port, path: '/live' } } },
      readiness: { app: { tcpSocket: { port: web.port } } },
      startup: { app: { tcpSocket: { port: refused } } },
    },
  });
  subscribe(CHANNEL, onStart);
});

afterAll(async () => {
  unsubscribe(CHANNEL, onStart);
  await companion.close();
  await web.close();
});

it.each([
  {
    role: 'liveness',
    path: '/osm-liveness-probe/app',
    status: 200,
    route: 'GET /osm-liveness-probe/:container',
  },
  { role: 'liveness', path: '/osm-liveness-probe', status: 200, route: 'GET /osm-liveness-probe' },
  {
    role: 'readiness',
    path: '/osm-readiness-probe/app',
    status: 200,
    route: 'GET /osm-readiness-probe/:container',
  },
  {
    role: 'startup',
    path: '/osm-startup-probe/app',
    status: 503,
    route: 'GET /osm-startup-probe/:container',
  },
  { role: 'healthcheck', path: '/healthz', status: 200, route: 'GET /healthz' },
  { role: 'healthcheck', path: '/osm-healthcheck', status: 400, route: 'GET /osm-healthcheck' },
  { role: 'startup', path: '/osm-healthcheck', status: 400, route: 'GET /osm-healthcheck' },
] as const)('$role $path: a Fastify route ($route)', async ({ role, path, status, route }) => {
  seen.length = 0;
  expect((await get(companion.url(role, path))).status).toBe(status);
  expect(seen).toEqual([{ role, route }]);
});

it.each([
  { name: "a kind's path on another kind's port", role: 'readiness', path: '/osm-liveness-probe/app' },
  { name: 'an unknown path', role: 'liveness', path: '/nope' },
  { name: '/healthz off the healthcheck port', role: 'liveness', path: '/healthz' },
] as const)("$name: Fastify's not-found handler (404), no route", async ({ role, path }) => {
  seen.length = 0;
  expect((await get(companion.url(role, path))).status).toBe(404);
  expect(seen).toEqual([]);
});
