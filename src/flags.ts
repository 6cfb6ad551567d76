// Flag parsing for every subcommand and for the modules below them (init/options.ts): node:util parseArgs with
// its mistakes reported as usage errors, the flag-over-environment rule, and a pure reader's `invalid` as a
// usage error. Imports nothing above it.

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

/**
 * What a pure reader (placementFlags, readCompanionCpuLimit) made of a flag, or its `invalid` as the UsageError:
 * `prefix` is what the subcommand puts before its usage errors (`inject: `).
 */
export function flagValue<T extends object>(read: T | { invalid: string }, prefix = ''): T {
  if ('invalid' in read && typeof read.invalid === 'string') throw new UsageError(`${prefix}${read.invalid}`);
  return read as T;
}
