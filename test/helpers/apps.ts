// Small real servers on loopback standing in for the app container.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';

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

/** A port on which nothing listens: bound once to learn a free number, then closed. */
export async function closedPort(host = '127.0.0.1'): Promise<number> {
  const app = await tcpApp((s) => s.destroy(), host);
  await app.close();
  return app.port;
}
