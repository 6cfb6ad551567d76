// The shape every subcommand has, and flag parsing that reports mistakes as usage errors.

import { isIP } from 'node:net';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { describeValue, UsageError } from '../errors.js';

export interface Command {
  name: string;
  /** The full `--help` text of the subcommand. */
  usage: string;
  /** Resolves when the command is done (for `serve`: after a graceful shutdown); throws on failure. */
  run(argv: readonly string[]): Promise<void>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs, strict, with its errors turned into UsageError naming the subcommand. */
export function parseFlags<T extends Options>(command: string, argv: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message} (see osm-healthcheck ${command} --help)`, {
      cause: err,
    });
  }
}

/** A flag's value, else the environment variable's, else undefined. Flags win over the environment. */
export function flagOrEnv(flag: string | undefined, envName: string): string | undefined {
  if (flag !== undefined) return flag;
  const fromEnv = process.env[envName];
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
}

/** Where probes go: env POD_IP when set (what kubelet itself dials), else 127.0.0.1. */
export function podTargetHost(): string {
  const podIp = process.env.POD_IP?.trim();
  if (podIp === undefined || podIp === '') return '127.0.0.1';
  if (isIP(podIp) === 0)
    throw new UsageError(`env POD_IP must be an IP address, got ${describeValue(podIp)}`);
  return podIp;
}
