// `osm-healthcheck serve`: flags and env -> probe table -> app + listeners; on SIGTERM waits for the app to go, then
// drains; on SIGINT drains at once.

import pkg from '../../package.json' with { type: 'json' };
import { HealthcheckError } from '../errors.js';
import {
  badFlagValue,
  flagOrEnv,
  flagOrEnvBoolean,
  noArguments,
  parseFlags,
  sourceName,
  usageError,
} from '../flags.js';
import { createLogger, LOG_LEVELS, type Logger, levelOfVerbosity, VERBOSITY_NAMES } from '../log.js';
import { lazyExposition } from '../metrics/load-exposition.js';
import { Recorder } from '../metrics/recorder.js';
import { parseListenPorts, parsePortRanges, portSet } from '../ports.js';
import { preloadProbers, runProbe } from '../probe/run.js';
import {
  DEFAULT_PORTS,
  HEALTHCHECK_PATH,
  LISTENER_ROLES,
  type ListenerRole,
  PROBE_KINDS,
  PROBES_ENV,
  type ProbeKind,
  RESTARTS_ENV,
  SHUTDOWN_GRACE_ENV,
} from '../scheme.js';
import { SEAL_FILE_ENV } from '../seal/record.js';
import type { SealVerdict } from '../seal/verdict.js';
import { type App, buildApp } from '../server/app.js';
import {
  AskedPorts,
  appPorts,
  DEFAULT_SHUTDOWN_GRACE_SECONDS,
  parseShutdownGrace,
} from '../server/app-gone.js';
import { type HeaderRule, headerRule } from '../server/header-probes.js';
import { type Listeners, listen } from '../server/listeners.js';
import { osmEdgeProber } from '../server/osm-edge-answers.js';
import { parseRestarts } from '../server/restarts.js';
import { passthroughPort } from '../server/routing.js';
import { readSealFile } from '../server/seal-file.js';
import { sealedAdmits } from '../server/sealed-callers.js';
import { FRESH_MS, parseSharedCheckWindow } from '../server/shared-checks.js';
import { stopOnSignals } from '../server/shutdown.js';
import { CONNECTION_RATE } from '../server/source-rate.js';
import { describeHandler } from '../table/describe.js';
import { loadProbeTable } from '../table/load.js';
import { entries } from '../table/parse.js';
import type { ProbeEntry, ProbeTable } from '../table/types.js';
import { type Command, podTargetHost } from './command.js';

const DRAIN_MS = 4_000;
const TLS_PASSTHROUGH_ENV = 'OSM_HEALTHCHECK_TLS_PASSTHROUGH';
const MAX_PROBES_PER_LISTENER = 256;

const usage = `Usage: osm-healthcheck serve [flags]

Serves kubelet's rewritten probes on four ports and runs the original probes against the app.

Flags (each also read from the environment variable shown; flags win):
  --probes FILE          probe table JSON file       (else env ${PROBES_ENV} holds the JSON itself)
  --ports LIST           liveness,readiness,startup,healthcheck ports
                         (OSM_HEALTHCHECK_PORTS; default ${LISTENER_ROLES.map((r) => DEFAULT_PORTS[r]).join(',')})
  --allowed-ports LIST   ports /osm-healthcheck may reach when there is no probe table, e.g. 8080,9000-9010
                         (OSM_HEALTHCHECK_ALLOWED_PORTS; default: any; with a table it runs only the
                         table's own probes: the port and path of an httpGet one, the port of a tcpSocket one)
  --tls-passthrough      pipe a TLS connection on 15901-15903 raw to that kind's HTTPS probe port, for kubelet
                         probes that speak HTTPS to the companion (OSM's older form; inject never writes one)
                         (OSM_HEALTHCHECK_TLS_PASSTHROUGH=true; default off: such a connection gets a 400)
  --host ADDRESS         bind address (OSM_HEALTHCHECK_HOST; default :: and 0.0.0.0)
  --caller-rate N        new connections a second each caller address may open on a port; past it they are
                         closed as accepted (OSM_HEALTHCHECK_CALLER_RATE; default ${CONNECTION_RATE.perSecond}, ${CONNECTION_RATE.burst} at once; 0: no limit)
  --shared-check-window MS
                         requests for a probe within MS of the start of its check share it: one check of the
                         app at a time per probe (OSM_HEALTHCHECK_SHARED_CHECK_WINDOW_MS; 0-${FRESH_MS}, default ${FRESH_MS})
  --seal-file FILE       init's seal verdict (${SEAL_FILE_ENV}; inject sets it in a pod it seals): when it
                         says sealed, answer only the node agent's source and loopback; else every caller
  --log-level LEVEL      ${LOG_LEVELS.join('|')} (OSM_HEALTHCHECK_LOG_LEVEL; default info)
  --shutdown-grace SECONDS
                         on SIGTERM, wait at most this long for the app to stop before draining
                         (${SHUTDOWN_GRACE_ENV}; default ${DEFAULT_SHUTDOWN_GRACE_SECONDS};
                         inject sets the pod's terminationGracePeriodSeconds)
  --osm-edge-compat      serve as osm-edge's (or OSM's) own osm-healthcheck container, as the image's
                         /osm-healthcheck does: ${HEALTHCHECK_PATH} on the healthcheck port alone (${DEFAULT_PORTS.healthcheck}, or the
                         last of --ports), as their sidecar listens on the other three; no probe table
  --verbosity, -v LEVEL  with --osm-edge-compat, their binary's log flag in place of --log-level:
                         ${VERBOSITY_NAMES.join('|')}
  --help, --version

Probes run against env POD_IP when set (what kubelet dials), else 127.0.0.1. Env ${RESTARTS_ENV}: how many
times the image's supervisor restarted serve in this container (osm_healthcheck_restarts_total on /metrics).

On SIGTERM, serve keeps answering every probe (and /healthz) until none of the app's ports accepts a connection
any more (polled every 250 ms) or the grace is over; then it stops accepting, lets in-flight probes finish (4 s at
most) and exits 0. The app's ports are the table's, or without one those ${HEALTHCHECK_PATH} was asked about;
with none asked about yet, on SIGINT and on a second SIGTERM it drains at once.`;

function describeEntry(entry: ProbeEntry): string {
  return `${entry.kind} ${entry.container} -> ${describeHandler(entry.handler)} (timeout ${entry.timeoutSeconds}s)`;
}

/**
 * --log-level (or its env), or in osm-edge compat their --verbosity, as a pino level. --verbosity alone is refused:
 * it is their binary's spelling, taken only where their injector writes it.
 */
function logLevel(logLevelFlag: string | undefined, verbosity: string | undefined, compat: boolean): string {
  if (verbosity !== undefined) {
    if (!compat)
      throw usageError('--verbosity goes with --osm-edge-compat', "serve's own flag is --log-level");
    if (logLevelFlag !== undefined) throw usageError('--verbosity and --log-level both given', 'one of them');
    const level = levelOfVerbosity(verbosity);
    if (level === undefined) {
      throw badFlagValue('--verbosity', verbosity, VERBOSITY_NAMES.join(', '));
    }
    return level;
  }
  const level = flagOrEnv(logLevelFlag, 'OSM_HEALTHCHECK_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    const from = sourceName(logLevelFlag, '--log-level', 'OSM_HEALTHCHECK_LOG_LEVEL');
    throw badFlagValue(from, level, LOG_LEVELS.join(', '));
  }
  return level;
}

function parseServeFlags(argv: readonly string[]) {
  return parseFlags('serve', argv, {
    probes: { type: 'string' },
    ports: { type: 'string' },
    'allowed-ports': { type: 'string' },
    host: { type: 'string' },
    'log-level': { type: 'string' },
    'shutdown-grace': { type: 'string' },
    'osm-edge-compat': { type: 'boolean' },
    'tls-passthrough': { type: 'boolean' },
    'shared-check-window': { type: 'string' },
    'caller-rate': { type: 'string' },
    verbosity: { type: 'string', short: 'v' },
    'seal-file': { type: 'string' },
  });
}

type Values = ReturnType<typeof parseServeFlags>['values'];

/** Everything serve runs with, read and checked from flags, env and the table before anything listens. */
interface Settings {
  compat: boolean;
  level: string;
  ports: Record<ListenerRole, number>;
  roles: readonly ListenerRole[];
  host: string | undefined;
  targetHost: string;
  graceSeconds: number;
  restarts: number;
  table: ProbeTable | undefined;
  headerRule: HeaderRule;
  /** The app port a TLS connection on each kind's listener goes to; empty unless --tls-passthrough. */
  passthrough: Partial<Record<ProbeKind, number>>;
  sharedCheckWindowMs: number;
  callerRate: number;
  /** init's verdict, when a seal file was named: sealed, the companion answers only the seal source and loopback. */
  seal: SealVerdict | undefined;
}

function listenPorts(values: Values): Record<ListenerRole, number> {
  const text = flagOrEnv(values.ports, 'OSM_HEALTHCHECK_PORTS');
  if (text === undefined) return { ...DEFAULT_PORTS };
  return parseListenPorts(text, sourceName(values.ports, '--ports', 'OSM_HEALTHCHECK_PORTS'));
}

function allowedFlag(values: Values): ReadonlySet<number> | undefined {
  const text = flagOrEnv(values['allowed-ports'], 'OSM_HEALTHCHECK_ALLOWED_PORTS');
  if (text === undefined) return undefined;
  const from = sourceName(values['allowed-ports'], '--allowed-ports', 'OSM_HEALTHCHECK_ALLOWED_PORTS');
  return portSet(parsePortRanges(text, from));
}

const WINDOW_ENV = 'OSM_HEALTHCHECK_SHARED_CHECK_WINDOW_MS';
const CALLER_RATE_ENV = 'OSM_HEALTHCHECK_CALLER_RATE';

function callerRate(values: Values): number {
  const text = flagOrEnv(values['caller-rate'], CALLER_RATE_ENV);
  if (text === undefined) return CONNECTION_RATE.perSecond;
  const rate = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(rate)) {
    const from = sourceName(values['caller-rate'], '--caller-rate', CALLER_RATE_ENV);
    throw badFlagValue(from, text, 'whole connections a second, 0 for no limit');
  }
  return rate;
}

function sharedCheckWindow(values: Values): number {
  const text = flagOrEnv(values['shared-check-window'], WINDOW_ENV);
  if (text === undefined) return FRESH_MS;
  return parseSharedCheckWindow(
    text,
    sourceName(values['shared-check-window'], '--shared-check-window', WINDOW_ENV),
  );
}

function graceSeconds(values: Values): number {
  const text = flagOrEnv(values['shutdown-grace'], SHUTDOWN_GRACE_ENV);
  if (text === undefined) return DEFAULT_SHUTDOWN_GRACE_SECONDS;
  return parseShutdownGrace(
    text,
    sourceName(values['shutdown-grace'], '--shutdown-grace', SHUTDOWN_GRACE_ENV),
  );
}

/**
 * --tls-passthrough: the kinds whose listener pipes a TLS ClientHello raw to the app's HTTPS probe port. Only
 * with a table that has such a port: osm-edge compat binds no 15901-15903, and without a table nothing to pipe to.
 */
function passthroughPorts(values: Values, table: ProbeTable | undefined, compat: boolean) {
  if (!flagOrEnvBoolean(values['tls-passthrough'], TLS_PASSTHROUGH_ENV)) return {};
  const from = sourceName(values['tls-passthrough'], '--tls-passthrough', TLS_PASSTHROUGH_ENV);
  if (compat) throw usageError(`${from} with --osm-edge-compat`, 'one of them: compat binds 15904 alone');
  const ports: Partial<Record<ProbeKind, number>> = {};
  for (const kind of PROBE_KINDS) {
    const port = passthroughPort(table, kind);
    if (port !== undefined) ports[kind] = port;
  }
  if (Object.keys(ports).length === 0) {
    throw usageError(
      `${from} passes nothing through: ${table === undefined ? 'no probe table' : 'no kind of the probe table has one HTTPS httpGet port'}`,
      'a probe table with an HTTPS httpGet probe, or no --tls-passthrough',
    );
  }
  return ports;
}

async function readSettings(argv: readonly string[]): Promise<Settings> {
  const { values, positionals } = parseServeFlags(argv);
  noArguments('serve', positionals);
  const compat = values['osm-edge-compat'] === true;
  const level = logLevel(values['log-level'], values.verbosity, compat);
  const ports = listenPorts(values);
  const allowed = allowedFlag(values);
  const grace = graceSeconds(values);
  const restarts = parseRestarts(process.env[RESTARTS_ENV]);
  const table = await loadProbeTable({ file: values.probes, env: process.env[PROBES_ENV] });
  if (compat && table !== undefined) {
    const from = values.probes === undefined ? `env ${PROBES_ENV}` : '--probes';
    throw usageError(
      `--osm-edge-compat serves ${HEALTHCHECK_PATH} alone, but a probe table came from ${from}`,
      "no table: its routes need ports 15901-15903, where osm-edge's sidecar listens",
    );
  }
  return {
    compat,
    level,
    ports,
    roles: compat ? ['healthcheck'] : LISTENER_ROLES,
    host: flagOrEnv(values.host, 'OSM_HEALTHCHECK_HOST'),
    targetHost: podTargetHost(),
    graceSeconds: grace,
    restarts,
    table,
    headerRule: headerRule(table, allowed),
    passthrough: passthroughPorts(values, table, compat),
    sharedCheckWindowMs: sharedCheckWindow(values),
    callerRate: callerRate(values),
    seal: await readSealFile(flagOrEnv(values['seal-file'], SEAL_FILE_ENV)),
  };
}

async function bindListeners(
  settings: Settings,
  app: App,
  log: Logger,
  recorder: Recorder,
): Promise<Listeners> {
  const { ports, roles, passthrough } = settings;
  try {
    return await listen({
      ports,
      roles,
      http: app.server,
      passthrough: (role) => (role === 'healthcheck' ? undefined : passthrough[role]),
      targetHost: settings.targetHost,
      log,
      host: settings.host,
      onEvicted: (role) => recorder.connectionEvicted(role),
      onShed: (role) => recorder.connectionCut(role, 'rate'),
      callerRate: settings.callerRate,
      admits: settings.seal?.sealed === true ? sealedAdmits : undefined,
    });
  } catch (err) {
    await app.close();
    const e = err as NodeJS.ErrnoException;
    throw new HealthcheckError(
      'OSM_HC_LISTEN',
      `cannot listen on ports ${roles.map((role) => ports[role]).join(',')}: ${e.message}`,
      { cause: err },
    );
  }
}

/**
 * The start-up lines: without a table, first a warning naming what any caller can reach (docs/security.md), once;
 * then the ready line whoever waits for serve watches.
 */
function announce(log: Logger, settings: Settings, listeners: Listeners): void {
  const { table, headerRule: rule, targetHost } = settings;
  if (table === undefined) {
    log.warn(
      { target: targetHost, reach: rule.reach },
      `serving without a probe table: any caller that reaches ${HEALTHCHECK_PATH} can have this companion probe ${rule.reach} on ${targetHost}, past the mesh`,
    );
  }
  log.info(
    {
      ports: listeners.ports,
      target: targetHost,
      probes: table === undefined ? null : entries(table).map(describeEntry),
      headerProbes: rule.reach,
      tlsPassthrough: settings.passthrough,
      restarts: settings.restarts,
      seal: settings.seal ?? null,
    },
    settings.compat
      ? `serving ${HEALTHCHECK_PATH} only (osm-edge compat)`
      : table === undefined
        ? 'serving header-driven probes only (no probe table)'
        : 'serving',
  );
}

async function run(argv: readonly string[]): Promise<void> {
  const settings = await readSettings(argv);
  const { table, targetHost, compat } = settings;
  await preloadProbers(table === undefined ? [] : entries(table).map((e) => e.handler));

  const log = createLogger(settings.level);
  let listeners: Listeners | undefined;
  let draining = false;
  const recorder = new Recorder(table);
  const asked = new AskedPorts();
  const app = await buildApp({
    table,
    headerRule: settings.headerRule,
    targetHost,
    prober: compat ? osmEdgeProber(runProbe) : runProbe,
    log,
    roleOf: (socket) => listeners?.roleOf(socket),
    isReady: () => listeners !== undefined && !draining,
    maxProbesPerListener: MAX_PROBES_PER_LISTENER,
    sharedCheckWindowMs: settings.sharedCheckWindowMs,
    recorder,
    exposition: lazyExposition(recorder, { version: pkg.version, restarts: settings.restarts }),
    // With a table, header-driven probes run only the table's probes: its ports are the app's.
    onAsked: table === undefined ? (port) => asked.add(port) : undefined,
  });
  listeners = await bindListeners(settings, app, log, recorder);
  // A refused connect costs node a stack trace, formatted at once, that names only its own internals: 15 µs, a
  // fifth of the probe's CPU (BENCHMARKS.md). While serving, errors carry none unless debug logging asks for them.
  const stackTraceLimit = Error.stackTraceLimit;
  if (!log.isLevelEnabled('debug')) Error.stackTraceLimit = 0;
  // Handlers go in before the ready line: whoever waits for that line may signal us at once.
  const active = listeners;
  const stopped = stopOnSignals({
    log,
    appPorts: table === undefined ? () => asked.sorted() : () => appPorts(table),
    targetHost,
    graceSeconds: settings.graceSeconds,
    onDrain: () => {
      draining = true;
    },
    drain: () =>
      Promise.all([active.close(DRAIN_MS), app.close()]).finally(() => {
        Error.stackTraceLimit = stackTraceLimit;
        log.info('stopped');
        log.flush();
      }),
  });
  announce(log, settings, listeners);
  await stopped;
}

export const serveCommand: Command = {
  name: 'serve',
  usage,
  run,
};
