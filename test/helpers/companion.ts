// Starts the real companion (app + listeners on ephemeral loopback ports) with its logs captured.

import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.js';
import { lazyExposition } from '../../src/metrics/load-exposition.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { runProbe } from '../../src/probe/run.js';
import type { ListenerRole } from '../../src/scheme.js';
import { buildApp } from '../../src/server/app.js';
import { headerRule } from '../../src/server/header-probes.js';
import { type Listeners, listen } from '../../src/server/listeners.js';
import { passthroughPort } from '../../src/server/routing.js';
import { parseProbeTable } from '../../src/table/parse.js';

export interface Companion {
  ports: Record<ListenerRole, number>;
  url(role: ListenerRole, path: string): string;
  logs: Array<Record<string, unknown>>;
  listeners: Listeners;
  recorder: Recorder;
  close(graceMs?: number): Promise<void>;
}

export interface CompanionOptions {
  table?: unknown;
  allowed?: Set<number>;
  /** serve's --tls-passthrough: a ClientHello on 15901-15903 piped to the kind's HTTPS port. */
  tlsPassthrough?: boolean;
  targetHost?: string;
  host?: string;
  maxProbesPerListener?: number;
  /** Connections held per port before a newcomer takes the place of the caller holding the most; default 1024. */
  maxConnectionsPerPort?: number;
}

export async function startCompanion(options: CompanionOptions = {}): Promise<Companion> {
  const table = options.table === undefined ? undefined : parseProbeTable(options.table);
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') logs.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger('debug', sink);
  const targetHost = options.targetHost ?? '127.0.0.1';
  const host = options.host ?? '127.0.0.1';
  let listeners: Listeners | undefined;
  const recorder = new Recorder(table);
  const app = await buildApp({
    table,
    headerRule: headerRule(table, options.allowed),
    targetHost,
    prober: runProbe,
    log,
    roleOf: (socket) => listeners?.roleOf(socket),
    isReady: () => listeners !== undefined,
    maxProbesPerListener: options.maxProbesPerListener ?? 256,
    recorder,
    exposition: lazyExposition(recorder, { version: '0.0.0-test', restarts: 0 }),
  });
  listeners = await listen({
    ports: { liveness: 0, readiness: 0, startup: 0, healthcheck: 0 },
    http: app.server,
    passthrough: (role) =>
      role === 'healthcheck' || options.tlsPassthrough !== true ? undefined : passthroughPort(table, role),
    targetHost,
    log,
    host,
    maxConnectionsPerPort: options.maxConnectionsPerPort,
    onEvicted: (role) => recorder.connectionEvicted(role),
    onShed: (role) => recorder.connectionCut(role, 'rate'),
  });
  const bound = listeners;
  const base = host.includes(':') ? `[${host}]` : host;
  // All four listeners are bound here (no `roles`).
  const ports = bound.ports as Record<ListenerRole, number>;
  return {
    ports,
    url: (role, path) => `http://${base}:${ports[role]}${path}`,
    logs,
    listeners: bound,
    recorder,
    close: async (graceMs = 1000) => {
      await Promise.all([bound.close(graceMs), app.close()]);
    },
  };
}
