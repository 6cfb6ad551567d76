// Binds the four companion ports and hands each connection to the HTTP app, or, on 15901-15903, to the TLS
// passthrough (tls-passthrough.ts), each port's connections shared fairly by the callers' addresses
// (source-shares.ts); on close, drains them within a grace.

import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { listenOn } from '../listen-address.js';
import type { Logger } from '../log.js';
import { LISTENER_ROLES, type ListenerRole } from '../scheme.js';
import { CONNECTION_RATE, SourceRate } from './source-rate.js';
import { SourceShares, sourceOf } from './source-shares.js';
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
  /** Connections held per port; past it a newcomer takes the place of the caller holding the most. Default 1024. */
  maxConnectionsPerPort?: number;
  /** Told of each connection closed to make room for a caller holding fewer. */
  onEvicted?: (role: ListenerRole) => void;
  /** Told of each connection closed at once: its caller opened more than its rate (source-rate.ts). */
  onShed?: (role: ListenerRole) => void;
  /** New connections a second per caller address and port (source-rate.ts); 0: no limit. Default 50. */
  callerRate?: number;
  /** Whether a caller is answered at all (a sealed pod: sealed-callers.ts); default every caller. */
  admits?: (remoteAddress: string | undefined) => boolean;
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

// A cap per port still bounds memory and file descriptors (4 ports, each connection in flight also one to the app),
// but it is a share, never a wall: kubelet's connection takes the place of the caller holding the most.
export const MAX_CONNECTIONS_PER_PORT = 1024;
// When the kernel's queue of connections not yet accepted is full, it drops a new SYN, and kubelet's client sends it
// again only after a second: a probe failed. A deep queue turns a flood that outpaces accept() for a moment into a
// wait of milliseconds instead (each of a flooder's costs microseconds: source-rate.ts); somaxconn caps it (4096).
const ACCEPT_BACKLOG = 65_535;

export async function listen(options: ListenOptions): Promise<Listeners> {
  const roles = new WeakMap<Socket, ListenerRole>();
  const servers: Server[] = [];
  const tunnels = new Set<Socket>();
  const ports: Partial<Record<ListenerRole, number>> = {};

  const toHttp = (socket: Socket, role: ListenerRole) => {
    roles.set(socket, role);
    options.http.emit('connection', socket);
  };

  /**
   * Admits the connection within its caller's rate and into its port's shares, closing one of the caller holding
   * the most when full.
   */
  const shared = (role: ListenerRole) => {
    const perSecond = options.callerRate ?? CONNECTION_RATE.perSecond;
    const rate = perSecond === 0 ? undefined : new SourceRate(perSecond, CONNECTION_RATE.burst);
    const shares = new SourceShares<Socket>(options.maxConnectionsPerPort ?? MAX_CONNECTIONS_PER_PORT);
    return (socket: Socket): boolean => {
      const source = sourceOf(socket.remoteAddress);
      if (rate !== undefined && !rate.take(source)) {
        socket.destroy();
        options.onShed?.(role);
        return false;
      }
      const admission = shares.add(source, socket);
      if (!admission.admitted) {
        socket.destroy();
        return false;
      }
      socket.once('close', () => shares.delete(source, socket));
      if (admission.evicted !== undefined) {
        admission.evicted.destroy();
        options.onEvicted?.(role);
      }
      return true;
    };
  };

  const onConnection = (role: ListenerRole) => {
    const admit = shared(role);
    return (socket: Socket) => {
      if (options.admits?.(socket.remoteAddress) === false) return void socket.destroy();
      if (!admit(socket)) return;
      const port = role === 'healthcheck' ? undefined : options.passthrough(role);
      if (port === undefined) return toHttp(socket, role);
      byFirstByte(
        socket,
        () => tunnel(socket, options.targetHost, port, options.log.child({ listener: role }), tunnels),
        () => toHttp(socket, role),
      );
    };
  };

  try {
    for (const role of options.roles ?? LISTENER_ROLES) {
      const server = createServer({ noDelay: true }, onConnection(role));
      servers.push(server);
      ports[role] = await listenOn(server, options.ports[role], options.host, ACCEPT_BACKLOG);
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
