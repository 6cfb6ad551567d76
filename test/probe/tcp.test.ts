// probeTcp against real loopback listeners: connected, refused, and a listener whose accept queue is full.

import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { probeTcp } from '../../src/probe/tcp.js';

const TIMEOUT_MS = 900;

/** What the app saw of one probe connection. */
interface SeenConnection {
  bytes: number;
  /** The probe's FIN arrived (a clean close, not a reset). */
  ended: boolean;
  /** Resolves with `hadError` when the app's side of the connection closes. */
  closed: Promise<boolean>;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

async function listen(host: string, onSocket: (socket: Socket) => void = () => {}): Promise<number> {
  const server = createServer(onSocket);
  servers.push(server);
  server.listen(0, host);
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${host}: no TCP address`);
  return address.port;
}

/** A listener that records its first connection: bytes received, whether it ended cleanly, when it closed. */
async function recordingServer(host: string, greeting?: string) {
  let seen: (connection: SeenConnection) => void = () => {};
  const connection = new Promise<SeenConnection>((resolve) => {
    seen = resolve;
  });
  const port = await listen(host, (socket) => {
    const record: SeenConnection = {
      bytes: 0,
      ended: false,
      closed: new Promise((done) => socket.on('close', done)),
    };
    socket.on('data', (chunk: Buffer) => {
      record.bytes += chunk.length;
    });
    socket.on('end', () => {
      record.ended = true;
    });
    socket.on('error', () => {});
    if (greeting !== undefined) socket.write(greeting);
    seen(record);
  });
  return { port, connection };
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

const ipv6 = await canListenOn('::1');
async function canListenOn(host: string): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((done) => {
    server.once('error', () => done(false));
    server.listen(0, host, () => done(true));
  });
  if (ok) await new Promise((done) => server.close(done));
  else console.warn('SKIPPING IPv6 TCP probe cases: cannot listen on ::1 on this machine');
  return ok;
}

describe('probeTcp', () => {
  it.each([
    { name: 'IPv4 listener', host: '127.0.0.1', shown: '127.0.0.1', greeting: undefined },
    { name: 'IPv6 listener', host: '::1', shown: '[::1]', greeting: undefined },
    {
      name: 'app that speaks first (SSH-style banner)',
      host: '127.0.0.1',
      shown: '127.0.0.1',
      greeting: 'SSH-2.0\r\n',
    },
  ])('$name: connects, closes without sending a byte, succeeds', async ({ host, shown, greeting }) => {
    if (host === '::1' && !ipv6) return;
    const { port, connection: seen } = await recordingServer(host, greeting);
    const result = await probeTcp(port, { host, timeoutMs: TIMEOUT_MS });
    expect(result.verdict).toBe('success');
    expect(result.status).toBe(200);
    expect(result.message).toMatch(new RegExp(`^tcp ${escapeRegExp(shown)}:${port} connected in \\d+ ms$`));
    const connection = await seen;
    const hadError = await connection.closed;
    expect(connection.bytes).toBe(0);
    // Nothing unread on the probe's side: close(2) sends a FIN, exactly as kubelet's conn.Close(). When the
    // banner may already sit unread in the probe's socket, close(2) may reset instead, in Go as in Node.
    if (greeting === undefined)
      expect({ ended: connection.ended, hadError }).toEqual({ ended: true, hadError: false });
  });

  it('refused port: failure 503 with the dial error', async () => {
    const port = await freePort();
    const result = await probeTcp(port, { host: '127.0.0.1', timeoutMs: TIMEOUT_MS });
    expect(result).toEqual({
      verdict: 'failure',
      status: 503,
      reason: 'refused',
      message: expect.stringMatching(
        new RegExp(
          `^tcp 127\\.0\\.0\\.1:${port} failed: connect ECONNREFUSED 127\\.0\\.0\\.1:${port} after \\d+ ms$`,
        ),
      ),
    });
  });

  it('listener that never accepts: the dial times out once its accept queue is full', async () => {
    const { port, release } = await neverAcceptingListener();
    try {
      // Linux completes handshakes into the accept queue (backlog + 1 entries), then drops further SYNs, so the
      // next dial hangs exactly like one to a black hole: the probe's own timer has to end it.
      const results = [];
      for (let attempt = 0; attempt < 10; attempt++) {
        const result = await probeTcp(port, { host: '127.0.0.1', timeoutMs: 1000 });
        results.push(result);
        if (result.verdict === 'failure') break;
      }
      const last = results.at(-1);
      expect(results[0]?.verdict).toBe('success');
      expect(last).toEqual({
        verdict: 'failure',
        status: 503,
        reason: 'timeout',
        message: `tcp 127.0.0.1:${port} failed: timeout after 1000 ms waiting for connection`,
      });
    } finally {
      await release();
    }
  });
});

/**
 * A listener on a worker thread whose event loop is blocked in Atomics.wait, so nothing ever accepts.
 * `release` wakes it and stops the worker.
 */
async function neverAcceptingListener(): Promise<{ port: number; release: () => Promise<void> }> {
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const server = require('node:net').createServer();
     server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
       parentPort.postMessage(server.address().port);
       Atomics.wait(workerData, 0, 0);
     });`,
    { eval: true, workerData: gate },
  );
  const [port] = (await once(worker, 'message')) as [number];
  const release = async () => {
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    await worker.terminate();
  };
  return { port, release };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.[\]]/g, '\\$&');
}
