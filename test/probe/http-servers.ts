// Real loopback peers for the HTTP prober's tests: HTTP, HTTPS, h2 and raw-TCP servers on port 0 that record
// what they were sent, know when every client connection is gone, and are all closed by `closeServers`.

import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { TestCert } from '../helpers/tls.js';

export interface Seen {
  url: string;
  httpVersion: string;
  /** Header names and values in wire order, as node's rawHeaders gives them. */
  headers: [string, string][];
}

export interface Peer {
  port: number;
  /** Every request the server received, in order. */
  seen: Seen[];
  /** Resolves once no client connection is open any more: proof the prober closed its side. */
  idle(): Promise<void>;
}

interface Received {
  url?: string | undefined;
  httpVersion: string;
  rawHeaders: string[];
}

const running: { server: Server; sockets: Set<Socket> }[] = [];

async function start(server: Server, host: string, seen: Seen[] = []): Promise<Peer> {
  const sockets = new Set<Socket>();
  let drained: (() => void) | undefined;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) drained?.();
    });
  });
  running.push({ server, sockets });
  server.listen(0, host);
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('test server has no port');
  return {
    port: address.port,
    seen,
    idle: () => (sockets.size === 0 ? Promise.resolve() : new Promise((resolve) => (drained = resolve))),
  };
}

function recording<Req extends Received, Res>(
  handler: (req: Req, res: Res) => void,
  seen: Seen[],
): (req: Req, res: Res) => void {
  return (req, res) => {
    const headers: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      headers.push([req.rawHeaders[i] ?? '', req.rawHeaders[i + 1] ?? '']);
    }
    seen.push({ url: req.url ?? '', httpVersion: req.httpVersion, headers });
    handler(req, res);
  };
}

export function httpPeer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host = '127.0.0.1',
): Promise<Peer> {
  const seen: Seen[] = [];
  return start(createHttpServer(recording(handler, seen)), host, seen);
}

/** An HTTPS server without ALPN (so HTTP/1.1); `servernames` records the SNI of each TLS connection. */
export async function httpsPeer(
  cert: TestCert,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Peer & { servernames: (string | false)[] }> {
  const seen: Seen[] = [];
  const servernames: (string | false)[] = [];
  const server = createHttpsServer({ key: cert.key, cert: cert.cert }, recording(handler, seen));
  server.on('secureConnection', (socket: TLSSocket) => servernames.push(socket.servername ?? false));
  return { ...(await start(server, '127.0.0.1', seen)), servernames };
}

/** An HTTPS server that speaks only HTTP/2 (no HTTP/1.1 fallback). */
export function h2Peer(
  cert: TestCert,
  handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void,
): Promise<Peer> {
  const seen: Seen[] = [];
  const server = createSecureServer(
    { key: cert.key, cert: cert.cert, allowHTTP1: false },
    recording(handler, seen),
  );
  server.on('sessionError', () => {});
  return start(server as unknown as Server, '127.0.0.1', seen);
}

/** A TCP server that hands each connection's first request head (up to the blank line) to `onRequest`. */
export function rawPeer(onRequest: (socket: Socket, head: string) => void): Promise<Peer> {
  return start(
    createNetServer((socket) => {
      let head = '';
      const onData = (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        onRequest(socket, head);
      };
      socket.on('data', onData);
    }),
    '127.0.0.1',
  );
}

/** A TCP server that accepts and reads, and then says nothing, ever. */
export function silentPeer(): Promise<Peer> {
  return start(
    createNetServer((socket) => socket.resume()),
    '127.0.0.1',
  );
}

export async function closeServers(): Promise<void> {
  const all = running.splice(0);
  for (const { sockets } of all) for (const socket of sockets) socket.destroy();
  await Promise.all(all.map(({ server }) => new Promise((resolve) => server.close(resolve))));
}

/** Whether this machine can bind the IPv6 loopback. */
export async function hasIpv6Loopback(): Promise<boolean> {
  const server = createNetServer();
  try {
    server.listen(0, '::1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}
