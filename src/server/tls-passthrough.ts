// OSM's older convention on 15901-15903: kubelet speaks TLS end to end to the companion, so a connection that
// opens with a TLS ClientHello is piped untouched to the app's HTTPS port; anything else is HTTP for the routes.

import { connect, type Socket } from 'node:net';
import type { Logger } from '../log.js';

// The first byte of a TLS record carrying a handshake (RFC 8446 §5.1, ContentType handshake(22)).
const TLS_HANDSHAKE = 0x16;
// A TLS tunnel idle this long is cut: kubelet's probes never need longer.
const PASSTHROUGH_IDLE_MS = 30_000;
// A client that connects and sends nothing is cut after this long.
const FIRST_BYTE_MS = 5_000;

/** Peeks at the first byte to tell a TLS ClientHello from an HTTP request, puts it back, and hands the socket on. */
export function byFirstByte(socket: Socket, onTls: () => void, onHttp: () => void): void {
  socket.setTimeout(FIRST_BYTE_MS, () => socket.destroy());
  socket.once('error', () => socket.destroy());
  socket.once('data', (chunk: Buffer) => {
    socket.setTimeout(0);
    socket.pause();
    socket.unshift(chunk);
    if (chunk[0] === TLS_HANDSHAKE) onTls();
    else onHttp();
    socket.resume();
  });
}

/** Pipes `client` both ways to `host:port`; both ends sit in `open` until closed, so a drain can cut them. */
export function tunnel(client: Socket, host: string, port: number, log: Logger, open: Set<Socket>): void {
  const upstream = connect({ host, port });
  for (const s of [client, upstream]) {
    open.add(s);
    s.setTimeout(PASSTHROUGH_IDLE_MS, () => s.destroy());
    s.once('close', () => open.delete(s));
  }
  upstream.on('error', (err) => {
    log.warn({ target: `${host}:${port}`, reason: err.message }, 'tls passthrough failed');
    client.destroy();
  });
  client.on('error', () => upstream.destroy());
  client.once('close', () => upstream.destroy());
  upstream.once('close', () => client.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
}
