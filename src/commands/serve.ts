// `osm-healthcheck serve`: flags and env -> probe table -> app + listeners; drains on SIGTERM/SIGINT.

import { isIP } from 'node:net';
import { describeValue, HealthcheckError, UsageError } from '../errors.js';
import { createLogger, LOG_LEVELS } from '../log.js';
import { parseListenPorts, parsePortRanges, portSet } from '../ports.js';
import { preloadProbers, runProbe } from '../probe/run.js';
import { DEFAULT_PORTS, LISTENER_ROLES, PROBES_ENV } from '../scheme.js';
import { buildApp } from '../server/app.js';
import { type Listeners, listen } from '../server/listeners.js';
import { allowedPorts, passthroughPort } from '../server/routing.js';
import { loadProbeTable } from '../table/load.js';
import { entries } from '../table/parse.js';
import type { ProbeEntry } from '../table/types.js';
import { type Command, flagOrEnv, parseFlags } from './command.js';

const DRAIN_MS = 4_000;
const MAX_PROBES_PER_LISTENER = 256;

const usage = `Usage: osm-healthcheck serve [flags]

Serves kubelet's rewritten probes on four ports and runs the original probes against the app.

Flags (each also read from the environment variable shown; flags win):
  --probes FILE          probe table JSON file       (else env ${PROBES_ENV} holds the JSON itself)
  --ports LIST           liveness,readiness,startup,healthcheck ports
                         (OSM_HEALTHCHECK_PORTS; default ${LISTENER_ROLES.map((r) => DEFAULT_PORTS[r]).join(',')})
  --allowed-ports LIST   ports /osm-healthcheck may reach when there is no probe table, e.g. 8080,9000-9010
                         (OSM_HEALTHCHECK_ALLOWED_PORTS; default: any; with a table: the table's ports)
  --host ADDRESS         bind address (OSM_HEALTHCHECK_HOST; default :: and 0.0.0.0)
  --log-level LEVEL      ${LOG_LEVELS.join('|')} (OSM_HEALTHCHECK_LOG_LEVEL; default info)
  --help, --version

Probes run against env POD_IP when set (what kubelet dials), else 127.0.0.1.`;

function describeEntry(entry: ProbeEntry): string {
  const h = entry.handler;
  const what =
    h.type === 'httpGet'
      ? `${h.scheme} :${h.port}${h.path}`
      : h.type === 'grpc'
        ? `grpc :${h.port} service=${JSON.stringify(h.service)}`
        : `tcp :${h.port}`;
  return `${entry.kind} ${entry.container} -> ${what} (timeout ${entry.timeoutSeconds}s)`;
}

async function run(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parseFlags('serve', argv, {
    probes: { type: 'string' },
    ports: { type: 'string' },
    'allowed-ports': { type: 'string' },
    host: { type: 'string' },
    'log-level': { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`serve takes no arguments, got ${describeValue(positionals[0])}`);

  const level = flagOrEnv(values['log-level'], 'OSM_HEALTHCHECK_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${describeValue(level)}`);
  }
  const portsText = flagOrEnv(values.ports, 'OSM_HEALTHCHECK_PORTS');
  const ports = portsText === undefined ? { ...DEFAULT_PORTS } : parseListenPorts(portsText);
  const allowedText = flagOrEnv(values['allowed-ports'], 'OSM_HEALTHCHECK_ALLOWED_PORTS');
  const allowedFlag =
    allowedText === undefined ? undefined : portSet(parsePortRanges(allowedText, '--allowed-ports'));
  const podIp = process.env.POD_IP?.trim();
  if (podIp !== undefined && podIp !== '' && isIP(podIp) === 0) {
    throw new UsageError(`env POD_IP must be an IP address, got ${describeValue(podIp)}`);
  }
  const targetHost = podIp === undefined || podIp === '' ? '127.0.0.1' : podIp;
  const table = await loadProbeTable({ file: values.probes, env: process.env[PROBES_ENV] });

  await preloadProbers(table === undefined ? [] : entries(table).map((e) => e.handler));

  const log = createLogger(level);
  let listeners: Listeners | undefined;
  let draining = false;
  const app = buildApp({
    table,
    allowedPorts: allowedPorts(table, allowedFlag),
    targetHost,
    prober: runProbe,
    log,
    roleOf: (socket) => listeners?.roleOf(socket),
    isReady: () => listeners !== undefined && !draining,
    maxProbesPerListener: MAX_PROBES_PER_LISTENER,
  });
  try {
    listeners = await listen({
      ports,
      http: app.server,
      passthrough: (role) => (role === 'healthcheck' ? undefined : passthroughPort(table, role)),
      targetHost,
      log,
      host: flagOrEnv(values.host, 'OSM_HEALTHCHECK_HOST'),
    });
  } catch (err) {
    await app.close();
    const e = err as NodeJS.ErrnoException;
    throw new HealthcheckError(
      'OSM_HC_LISTEN',
      `cannot listen on ports ${Object.values(ports).join(',')}: ${e.message}`,
      {
        cause: err,
      },
    );
  }
  // A refused connect costs node a stack trace, formatted at once, that names only its own internals: 15 µs, a
  // fifth of the probe's CPU (BENCHMARKS.md). While serving, errors carry none unless debug logging asks for them.
  const stackTraceLimit = Error.stackTraceLimit;
  if (!log.isLevelEnabled('debug')) Error.stackTraceLimit = 0;
  // Handlers go in before the ready line: whoever waits for that line may signal us at once.
  const active = listeners;
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (draining) return;
      draining = true;
      log.info({ signal }, 'draining');
      active
        .close(DRAIN_MS)
        .then(() => app.close())
        .finally(() => {
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          Error.stackTraceLimit = stackTraceLimit;
          log.info('stopped');
          log.flush();
          resolve();
        });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  log.info(
    {
      ports: listeners.ports,
      target: targetHost,
      probes: table === undefined ? null : entries(table).map(describeEntry),
      allowedPorts: table === undefined ? (allowedText ?? 'any') : 'the probe table ports',
    },
    table === undefined ? 'serving header-driven probes only (no probe table)' : 'serving',
  );
  await stopped;
}

export const serveCommand: Command = {
  name: 'serve',
  usage,
  run,
};
