// Binds the four companion ports and hands each connection to the HTTP app, or, on 15901-15903, to the TLS
// passthrough (tls-passthrough.ts); on close, drains them within a grace.

import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { listenOn } from '../listen-address.js';
import type { Logger } from '../log.js';
import { LISTENER_ROLES, type ListenerRole } from '../scheme.js';
import { byFirstByte, tunnel } from './tls-passthrough.js';

export interface ListenOptions {
  ports: Readonly<Record<ListenerRole, number>>;
  /**
   * The listeners bound, each on its port of `ports`; default all four. osm-edge's and OSM's healthcheck container
   * binds 15904 alone: their sidecar listens on 15901-15903 (`serve --osm-edge-compat`).
   */
  roles?: readonly ListenerRole[];
  /** The HTTP server behind the Fastify app (app.ts); it never listens itself. */
  http: HttpServer;
  /** Which app port a TLS connection on this role's listener goes to; undefined: not passed through. */
  passthrough: (role: ListenerRole) => number | undefined;
  targetHost: string;
  log: Logger;
  /** Bind address; default all interfaces, IPv6 and IPv4 where the kernel has IPv6. */
  host?: string;
}

export interface Listeners {
  /** Port actually bound per role bound (differs from the requested one when that was 0). */
  ports: Partial<Record<ListenerRole, number>>;
  roleOf(socket: Socket): ListenerRole | undefined;
  /**
   * Stop accepting, let in-flight requests finish for up to `graceMs`, then cut what is left. Runs beside the app's
   * own close (Fastify's: late requests on open connections get 503, and node's timeout sweeper stops).
   */
  close(graceMs: number): Promise<void>;
}

const MAX_CONNECTIONS_PER_PORT = 1024;

export async function listen(options: ListenOptions): Promise<Listeners> {
  const roles = new WeakMap<Socket, ListenerRole>();
  const servers: Server[] = [];
  const tunnels = new Set<Socket>();
  const ports: Partial<Record<ListenerRole, number>> = {};

  const toHttp = (socket: Socket, role: ListenerRole) => {
    roles.set(socket, role);
    options.http.emit('connection', socket);
  };

  const onConnection = (role: ListenerRole) => (socket: Socket) => {
    const port = role === 'healthcheck' ? undefined : options.passthrough(role);
    if (port === undefined) return toHttp(socket, role);
    byFirstByte(
      socket,
      () => tunnel(socket, options.targetHost, port, options.log.child({ listener: role }), tunnels),
      () => toHttp(socket, role),
    );
  };

  try {
    for (const role of options.roles ?? LISTENER_ROLES) {
      const server = createServer({ noDelay: true }, onConnection(role));
      server.maxConnections = MAX_CONNECTIONS_PER_PORT;
      servers.push(server);
      ports[role] = await listenOn(server, options.ports[role], options.host);
    }
  } catch (err) {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    throw err;
  }

  // node:http starts its headersTimeout/requestTimeout sweeper on 'listening' (setupConnectionsTracking), and this
  // server never listens itself: without this, a client dripping header bytes would hold its socket forever.
  options.http.emit('listening');

  return {
    ports,
    roleOf: (socket) => roles.get(socket),
    close: async (graceMs) => {
      const closed = servers.map((s) => new Promise((resolve) => s.close(resolve)));
      options.http.closeIdleConnections();
      const timer = setTimeout(() => {
        options.http.closeAllConnections();
        for (const s of tunnels) s.destroy();
      }, graceMs);
      // Idle keep-alive connections become idle after their in-flight request: keep sweeping them.
      const sweep = setInterval(() => options.http.closeIdleConnections(), 50);
      try {
        await Promise.all(closed);
      } finally {
        clearTimeout(timer);
        clearInterval(sweep);
      }
    },
  };
}
