// Flag parsing for every subcommand and for the modules below them (init/options.ts): node:util parseArgs with
// its mistakes reported as usage errors, and the flag-over-environment rule. Imports nothing above it.

import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './errors.js';

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
