// probeGrpc against real peers on loopback: grpc-js servers running grpc-health-check's HealthImplementation,
// a hand-written Check handler (to see the User-Agent, also through the companion, and to be slow), a server without the health service,
// a plain HTTP/1.1 server, a TCP server that never answers, and a refused port.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttp2Server, type Http2Server } from 'node:http2';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { build } from 'esbuild';
import { HealthImplementation, type ServingStatus, service } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common } from '../../scripts/bundle-options.mjs';
import { probeGrpc } from '../../src/probe/grpc.js';
import { get } from '../helpers/client.js';
import { startCompanion } from '../helpers/companion.js';
import { pastFreshWindow } from '../helpers/next-check.js';

const TIMEOUT_MS = 500;
// Longer than 127 bytes, so its length takes two bytes on the wire.
const LONG_SERVICE = `orders.${'x'.repeat(200)}`;
const DRAINING = 'draining: 100% fertig, ünïcode';
const ms = '\\d+ ms';

const grpcServers: grpc.Server[] = [];
const netServers: NetServer[] = [];
const ports = {
  health: 0,
  scripted: 0,
  bare: 0,
  http1: 0,
  http2: 0,
  hangup: 0,
  silent: 0,
  refused: 0,
  healthV6: 0,
};
const userAgents: string[] = [];
const silentSockets: Socket[] = [];

async function startGrpc(host: string, register: (server: grpc.Server) => void): Promise<number> {
  const server = new grpc.Server();
  register(server);
  grpcServers.push(server);
  return new Promise((resolve, reject) =>
    server.bindAsync(`${host}:0`, grpc.ServerCredentials.createInsecure(), (err, port) =>
      err === null ? resolve(port) : reject(err),
    ),
  );
}

async function listen(server: NetServer, host = '127.0.0.1'): Promise<number> {
  netServers.push(server);
  server.listen(0, host);
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${host}: no TCP address`);
  return address.port;
}

function healthService(): HealthImplementation {
  const health = new HealthImplementation({
    '': 'SERVING',
    'not-serving': 'NOT_SERVING',
    unknown: 'UNKNOWN',
  });
  health.setStatus('my.pkg.Orders', 'SERVING');
  health.setStatus(LONG_SERVICE, 'SERVING');
  // HealthImplementation's type leaves SERVICE_UNKNOWN to Watch, but the proto enum allows it from Check too
  // (grpc-go's health server answers it), so an app can send it.
  health.setStatus('service-unknown', 'SERVICE_UNKNOWN' as ServingStatus);
  return health;
}

let ipv6 = true;
beforeAll(async () => {
  ports.health = await startGrpc('127.0.0.1', (server) => healthService().addToServer(server));
  ports.scripted = await startGrpc('127.0.0.1', (server) =>
    server.addService(service, {
      check: (
        call: grpc.ServerUnaryCall<{ service: string }, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        userAgents.push(String(call.metadata.get('user-agent')[0]));
        if (call.request.service === 'draining') {
          return callback({ code: grpc.status.UNAVAILABLE, details: DRAINING });
        }
        if (call.request.service !== 'slow') return callback(null, { status: 'SERVING' });
        const timer = setTimeout(() => callback(null, { status: 'SERVING' }), 3 * TIMEOUT_MS);
        call.on('cancelled', () => clearTimeout(timer));
      },
    }),
  );
  ports.bare = await startGrpc('127.0.0.1', () => {});
  ports.http1 = await listen(createHttpServer((_, res) => res.end('not grpc\n')));
  // HTTP/2 without gRPC: a web server's 404 page.
  ports.http2 = await listen(
    createHttp2Server((_, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>no</h1>')),
  );
  // Takes the connection and the call, then the app dies: the connection drops mid-call.
  const hangup: Http2Server = createHttp2Server();
  hangup.on('connection', (socket: Socket) => hangup.once('stream', () => socket.destroy()));
  ports.hangup = await listen(hangup);
  ports.silent = await listen(
    createServer((socket) => {
      // Reads and drops the client's HTTP/2 preface, never answers: a hung app.
      silentSockets.push(socket.on('error', () => {}).resume());
    }),
  );
  const closed = createServer();
  ports.refused = await listen(closed);
  await new Promise((done) => closed.close(done));
  try {
    ports.healthV6 = await startGrpc('[::1]', (server) => healthService().addToServer(server));
  } catch {
    ipv6 = false;
    console.warn('SKIPPING IPv6 gRPC probe case: cannot listen on ::1 on this machine');
  }
});

afterAll(async () => {
  for (const server of grpcServers) server.forceShutdown();
  for (const socket of silentSockets) socket.destroy();
  await Promise.all(netServers.filter((s) => s.listening).map((s) => new Promise((done) => s.close(done))));
});

describe('probeGrpc', () => {
  it.each([
    { name: 'SERVING', server: 'health', service: '', verdict: 'success', message: `-> SERVING in ${ms}` },
    {
      name: 'custom service name, SERVING',
      server: 'health',
      service: 'my.pkg.Orders',
      verdict: 'success',
      message: `-> SERVING in ${ms}`,
    },
    ...['NOT_SERVING', 'SERVICE_UNKNOWN', 'UNKNOWN'].map((status) => ({
      name: status,
      server: 'health',
      service:
        status === 'NOT_SERVING' ? 'not-serving' : status === 'UNKNOWN' ? 'unknown' : 'service-unknown',
      verdict: 'failure',
      reason: 'grpc_status',
      message: `failed: service unhealthy \\(responded with "${status}"\\) after ${ms}`,
    })),
    {
      name: 'a service name of more than 127 bytes, SERVING',
      server: 'health',
      service: LONG_SERVICE,
      verdict: 'success',
      message: `-> SERVING in ${ms}`,
    },
    {
      name: 'the app answers UNAVAILABLE with a non-ASCII message',
      server: 'scripted',
      service: 'draining',
      verdict: 'failure',
      reason: 'grpc_status',
      message: `failed: health rpc probe failed: UNAVAILABLE: ${DRAINING} after ${ms}`,
    },
    {
      name: 'an HTTP/2 server that does not speak gRPC (404)',
      server: 'http2',
      service: '',
      verdict: 'failure',
      reason: 'grpc_status',
      message: `failed: server does not implement the grpc health protocol \\(grpc\\.health\\.v1\\.Health\\): Received HTTP status code 404 after ${ms}`,
    },
    {
      name: 'the connection drops mid-call',
      server: 'hangup',
      service: '',
      verdict: 'failure',
      reason: 'reset',
      message: `failed: health rpc probe failed: UNAVAILABLE: Connection dropped after ${ms}`,
    },
    {
      name: 'unknown service (NOT_FOUND)',
      server: 'health',
      service: 'nope',
      verdict: 'failure',
      reason: 'grpc_status',
      message: `failed: health rpc probe failed: NOT_FOUND: Health status unknown for service nope after ${ms}`,
    },
    {
      name: 'server without the health service (UNIMPLEMENTED)',
      server: 'bare',
      service: '',
      verdict: 'failure',
      reason: 'grpc_status',
      message: `failed: server does not implement the grpc health protocol \\(grpc\\.health\\.v1\\.Health\\): .+ after ${ms}`,
    },
    {
      name: 'slow handler',
      server: 'scripted',
      service: 'slow',
      verdict: 'failure',
      reason: 'timeout',
      message: `failed: health rpc did not complete within ${TIMEOUT_MS} ms`,
    },
    {
      name: 'plain HTTP/1.1 server',
      server: 'http1',
      service: '',
      verdict: 'failure',
      reason: 'other',
      message: `failed to connect: .+ after ${ms}`,
    },
    {
      name: 'TCP server that accepts and never answers',
      server: 'silent',
      service: '',
      verdict: 'failure',
      reason: 'timeout',
      message: `failed to connect within ${TIMEOUT_MS} ms`,
    },
    {
      name: 'refused port',
      server: 'refused',
      service: '',
      verdict: 'failure',
      reason: 'refused',
      message: `failed to connect: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+ after ${ms}`,
    },
  ] as const)('$name', async (want) => {
    const { server, service: name, verdict, message } = want;
    const port = ports[server as keyof typeof ports];
    const result = await probeGrpc({ port, service: name }, { host: '127.0.0.1', timeoutMs: TIMEOUT_MS });
    const prefix = `grpc 127\\.0\\.0\\.1:${port} service ${JSON.stringify(name).replace(/\./g, '\\.')}`;
    expect(result.message).toMatch(new RegExp(`^${prefix} ${message}$`));
    expect(result).toMatchObject({ verdict, status: verdict === 'success' ? 200 : 503 });
    // What /metrics counts the failure under (docs/metrics.md#failure-reasons).
    expect('reason' in result ? result.reason : undefined).toBe('reason' in want ? want.reason : undefined);
  });

  it('IPv6 ::1: SERVING', async () => {
    if (!ipv6) return;
    const result = await probeGrpc(
      { port: ports.healthV6, service: '' },
      { host: '::1', timeoutMs: TIMEOUT_MS },
    );
    expect(result.message).toMatch(
      new RegExp(`^grpc \\[::1\\]:${ports.healthV6} service "" -> SERVING in ${ms}$`),
    );
  });

  // What the app's gRPC server sees is kubelet's own: `kube-probe/x.y` and the token grpc-go appends, nothing
  // of node's or of grpc-js's (a grpc-js server hands the header on as it came).
  it.each([
    { name: 'no kubelet User-Agent: 1.30', userAgent: undefined, seen: 'kube-probe/1.30 grpc-go/1.58.3' },
    { name: 'kubelet 1.26', userAgent: 'kube-probe/1.26', seen: 'kube-probe/1.26 grpc-go/1.49.0' },
    { name: 'kubelet 1.29', userAgent: 'kube-probe/1.29', seen: 'kube-probe/1.29 grpc-go/1.58.3' },
    { name: 'kubelet 1.32', userAgent: 'kube-probe/1.32', seen: 'kube-probe/1.32 grpc-go/1.65.0' },
    { name: 'kubelet 1.36', userAgent: 'kube-probe/1.36', seen: 'kube-probe/1.36 grpc-go/1.79.3' },
    {
      name: 'a kubelet newer than known',
      userAgent: 'kube-probe/1.41',
      seen: 'kube-probe/1.41 grpc-go/1.79.3',
    },
  ])('sends $name as kubelet does', async ({ userAgent, seen }) => {
    const before = userAgents.length;
    const target = { host: '127.0.0.1', timeoutMs: TIMEOUT_MS };
    const result = await probeGrpc({ port: ports.scripted, service: '' }, target, userAgent);
    expect(result.verdict).toBe('success');
    expect(userAgents.slice(before)).toEqual([seen]);
  });

  it("through the companion: kubelet's HTTP User-Agent becomes its gRPC one", async () => {
    const companion = await startCompanion({
      table: { startup: { app: { grpc: { port: ports.scripted } } } },
    });
    try {
      for (const { incoming, seen } of [
        { incoming: 'kube-probe/1.36', seen: 'kube-probe/1.36 grpc-go/1.79.3' },
        { incoming: 'kube-probe/1.26', seen: 'kube-probe/1.26 grpc-go/1.49.0' },
        { incoming: 'curl/8.5.0', seen: 'kube-probe/1.30 grpc-go/1.58.3' },
      ]) {
        // Each past the last one's check: a request within 100 ms of it would share it (src/server/shared-checks.ts).
        await pastFreshWindow();
        const before = userAgents.length;
        const answer = await get(companion.url('startup', '/osm-startup-probe/app'), {
          'user-agent': incoming,
        });
        expect(answer.status, answer.body).toBe(200);
        expect(userAgents.slice(before), incoming).toEqual([seen]);
      }
    } finally {
      await companion.close();
    }
  });

  it('closes its connection after a probe that timed out', async () => {
    const before = silentSockets.length;
    const target = { host: '127.0.0.1', timeoutMs: TIMEOUT_MS };
    await probeGrpc({ port: ports.silent, service: '' }, target);
    const socket = silentSockets[before];
    if (socket === undefined) throw new Error('the silent server saw no connection');
    // A probe that left the handshake pending would hold the socket for good: bound the wait for a clear failure.
    const closed = socket.destroyed
      ? 'closed'
      : await Promise.race([once(socket, 'close').then(() => 'closed'), bound(5000)]);
    expect(closed).toBe('closed');
  });
});

// A fresh Node process runs the module as the build bundles it, so what it loads and what keeps it alive are its
// own: it must not load node:http2 before the first gRPC probe, and it must exit by itself after probes that
// succeeded and timed out (no session, socket or timer left running).
const CHILD = `
import { probeGrpc } from './src/probe/grpc.ts';
const loaded = () => process.moduleLoadList.includes('NativeModule http2');
const before = loaded();
const serving = await probeGrpc({ port: Number(process.env.SERVING_PORT), service: '' }, { host: '127.0.0.1', timeoutMs: 10000 });
const silent = await probeGrpc({ port: Number(process.env.SILENT_PORT), service: '' }, { host: '127.0.0.1', timeoutMs: ${TIMEOUT_MS} });
console.log(JSON.stringify({ before, after: loaded(), verdicts: [serving.verdict, silent.verdict] }));
`;

describe('probeGrpc in a fresh process', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'osm-hc-grpc-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads HTTP/2 on the first probe only and leaves nothing running', async () => {
    const root = new URL('../..', import.meta.url).pathname;
    const bundle = await build({
      ...common,
      stdin: { contents: CHILD, resolveDir: root, loader: 'ts', sourcefile: 'grpc-child.ts' },
      entryPoints: undefined,
      outdir: undefined,
      banner: {},
      write: false,
    });
    writeFileSync(join(dir, 'child.mjs'), bundle.outputFiles[0]?.text ?? '');
    const env = { ...process.env, SERVING_PORT: String(ports.health), SILENT_PORT: String(ports.silent) };
    const child = spawn(process.execPath, [join(dir, 'child.mjs')], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    const ended = await Promise.race([once(child, 'exit').then(([code]) => `exit ${code}`), bound(15_000)]);
    if (ended !== `exit 0`) child.kill();
    expect(ended).toBe('exit 0');
    expect(JSON.parse(stdout)).toEqual({ before: false, after: true, verdicts: ['success', 'failure'] });
  }, 30_000);
});

/** Resolves with 'still running' after `ms`: an upper bound on waiting for an event, never a synchronisation. */
function bound(ms: number): Promise<string> {
  return new Promise((resolve) => setTimeout(resolve, ms, 'still running').unref());
}
