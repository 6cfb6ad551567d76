// The root pino logger: NDJSON on stdout, one line per event, fields as data (never app data at top level).

import pino, { type Logger } from 'pino';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { name: 'osm-healthcheck' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}

/**
 * osm-edge's and OSM's own healthcheck binary takes `--verbosity LEVEL` (their injectors pass the injector's own
 * level): zerolog's names, matched case-insensitively (flomesh-io/osm-edge pkg/logger/logger.go, SetLogLevel). As
 * pino's levels: zerolog's panic is above its fatal, and pino's highest is fatal; disabled is silent.
 */
const VERBOSITY: Readonly<Record<string, (typeof LOG_LEVELS)[number]>> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  error: 'error',
  fatal: 'fatal',
  panic: 'fatal',
  disabled: 'silent',
};
export const VERBOSITY_NAMES = Object.keys(VERBOSITY);

/** The pino level of an osm-edge `--verbosity` value, or undefined when osm-edge would refuse it too. */
export function levelOfVerbosity(value: string): (typeof LOG_LEVELS)[number] | undefined {
  return Object.hasOwn(VERBOSITY, value.toLowerCase()) ? VERBOSITY[value.toLowerCase()] : undefined;
}
