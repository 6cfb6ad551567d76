// Small real servers on loopback standing in for the app container.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';

export interface Running<S> {
  server: S;
  port: number;
  close(): Promise<void>;
}

async function start<S extends Server | TcpServer>(server: S, host: string): Promise<Running<S>> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    server,
    port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function httpApp(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host = '127.0.0.1',
): Promise<Running<Server>> {
  return start(createServer(handler), host);
}

export function tcpApp(onSocket: (socket: Socket) => void, host = '127.0.0.1'): Promise<Running<TcpServer>> {
  return start(createTcpServer(onSocket), host);
}

/**
 * A port on which nothing listens, and which stays so: one below the kernel's ephemeral range, found refusing. A
 * port bound and closed again (as this once did) came from that range, so any test of the run listening on port 0
 * could be handed it a moment later, and a probe meant to be refused was answered.
 */
export async function closedPort(host = '127.0.0.1'): Promise<number> {
  const lowest = ephemeralFloor();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20000 + Math.floor(Math.random() * (lowest - 20000));
    if (await refuses(host, port)) return port;
  }
  throw new Error(`closedPort: no refusing port found on ${host} in 20000-${lowest - 1}`);
}

/** The lowest port the kernel hands out for port 0 (Linux's default range starts at 32768). */
function ephemeralFloor(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low !== undefined && Number.isInteger(low) && low > 21000) return low;
  } catch {
    // Not Linux, or no procfs: Linux's default.
  }
  return 32768;
}

function refuses(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}
