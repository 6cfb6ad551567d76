// serve's routes as one Fastify instance, composed from one module per concern; builds the app and never listens:
// listeners.ts binds the four ports and hands plain-HTTP connections to `app.server`. The calls below read as
// the route table of docs/architecture.md#serve-routes-and-verdicts.
//   kubelet -> HTTP -> listener -> Fastify route -> forward -> prober (HTTP / TCP / gRPC) -> app container

import type { Server } from 'node:http';
import type { ProbeTable } from '../table/types.js';
import { type ForwarderOptions, probeForwarder } from './forwarder.js';
import type { HeaderRule } from './header-probes.js';
import { registerHealthcheckRoute } from './healthcheck-route.js';
import { companionFastify } from './instance.js';
import { registerNotFound } from './not-found.js';
import { entryServer, registerProbeRoutes } from './probe-routes.js';
import { registerStatusRoutes, type StatusOptions } from './status-routes.js';

export interface AppOptions extends ForwarderOptions, StatusOptions {
  /** undefined: no table configured; only header-driven probes are served. */
  table: ProbeTable | undefined;
  /** What a header-driven probe may run: the table's probes, or without one the headers' (header-probes.ts). */
  headerRule: HeaderRule;
  /** Told each allowed port /osm-healthcheck is asked about (shutdown.ts waits on them without a table). */
  onAsked?: (port: number) => void;
}

export interface App {
  /** The HTTP server behind the routes: listeners.ts hands it connections, it never listens itself. */
  server: Server;
  /** Fastify's close: requests still arriving on open connections get 503, idle connections are closed. */
  close(): Promise<void>;
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { table, headerRule, recorder, log, roleOf } = options;
  const app = companionFastify(log, roleOf, (socket, reason) =>
    recorder.connectionCut(roleOf(socket), reason),
  );
  const forward = probeForwarder(options);
  const serveEntry = entryServer(table, forward);

  // GET /osm-<kind>-probe[/<container>] on that kind's port: run the table's entry.
  registerProbeRoutes(app, serveEntry);
  // GET /osm-healthcheck + Original-* headers, on any port: run the table probe they name (no table: what they name).
  registerHealthcheckRoute(app, {
    rule: headerRule,
    recorder,
    forward,
    serveEntry,
    onAsked: options.onAsked,
  });
  // GET /healthz and /metrics on 15904 only.
  registerStatusRoutes(app, options);
  // Anything else: 404 listing this port's paths, or 405 with Allow.
  registerNotFound(app, table, roleOf);

  await app.ready();
  return {
    server: app.server,
    close: () => app.close(),
  };
}
