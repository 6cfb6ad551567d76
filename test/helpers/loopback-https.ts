// An HTTPS server on 127.0.0.1 with a fresh test certificate, for the stand-in API servers: its connections are
// tracked so a stand-in can cut them all (an outage) and close() never waits for a client's keep-alive.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Socket } from 'node:net';
import { makeTestCert, type TestCert } from './tls.js';

export interface LoopbackHttps {
  url: string;
  cert: TestCert;
  /** Open connections, live. */
  sockets: ReadonlySet<Socket>;
  /** Cuts every connection, stops listening and removes the certificate. */
  close(): Promise<void>;
}

export async function startLoopbackHttps(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  /** Sees each new connection first; false drops it (a refused connection, as the client sees it). */
  admit: (socket: Socket) => boolean = () => true,
): Promise<LoopbackHttps> {
  const cert = makeTestCert();
  const sockets = new Set<Socket>();
  const server = createServer({ key: cert.key, cert: cert.cert }, handler);
  server.on('connection', (socket: Socket) => {
    if (!admit(socket)) return void socket.destroy();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    cert,
    sockets,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          cert.cleanup();
          resolve();
        });
      }),
  };
}
