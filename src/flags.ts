// Flag parsing for every subcommand and for the modules below them (init/options.ts), and the one shape of their
// usage errors: `what is wrong (what is accepted)`, to which cli.ts adds `osm-healthcheck COMMAND: ` and
// ` [OSM_HC_USAGE]`. node:util parseArgs does the parsing; its mistakes are told in our words, with the
// command's flags. Also the flag-over-environment rule, and a pure reader's `invalid` as a usage error. Imports
// nothing above it.

import { type ParseArgsConfig, parseArgs } from 'node:util';
import { describeValue, UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** A usage error in the one shape: `problem (accepted)`. No command name: cli.ts puts it in front. */
export function usageError(problem: string, accepted: string, options?: { cause?: unknown }): UsageError {
  return new UsageError(`${problem} (${accepted})`, options);
}

/** A flag's value refused: `--output "xml" is not accepted (yaml or json)`. */
export function badFlagValue(flag: string, got: unknown, accepted: string): UsageError {
  return usageError(`${flag} ${describeValue(got)} is not accepted`, accepted);
}

/** `--filename/-f FILE, --image VALUE, --native-sidecar, ...`: what `command` takes, for its usage errors. */
function flagList(options: Options): string {
  const flags = Object.entries(options).map(([name, option]) => {
    const short = option.short === undefined ? '' : `/-${option.short}`;
    return `--${name}${short}${option.type === 'string' ? ' VALUE' : ''}`;
  });
  return [...flags, '--help'].join(', ');
}

/** What is wrong with `argv` for `options`, in our words; undefined where node:util parseArgs saw something else. */
function flagProblem(command: string, argv: readonly string[], options: Options): UsageError | undefined {
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) {
      return usageError(`unknown flag ${token.rawName}`, `${command} takes ${flagList(options)}`);
    }
    const { value, rawName } = token;
    if (option.type === 'string' && value === undefined) {
      return usageError(`${rawName} needs a value`, `${rawName} VALUE, or ${rawName}=VALUE`);
    }
    if (option.type === 'string' && !token.inlineValue && value !== '-' && value?.startsWith('-')) {
      // `--image --placement first`: parseArgs will not take a flag for a value.
      return usageError(
        `${rawName} needs a value, got the flag ${value}`,
        `${rawName}=${value} for a value that starts with -`,
      );
    }
    if (option.type === 'boolean' && value !== undefined) {
      return usageError(`${rawName} takes no value, got ${describeValue(value)}`, `${rawName} alone`);
    }
  }
  return undefined;
}

/** node:util parseArgs, strict, its errors as usage errors in the one shape, listing the command's flags. */
export function parseFlags<T extends Options>(command: string, argv: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (err) {
    const ours = flagProblem(command, argv, options);
    if (ours !== undefined) throw ours;
    throw usageError((err as Error).message, `see osm-healthcheck ${command} --help`, { cause: err });
  }
}

/** Flags only: a stray argument is a usage error. */
export function noArguments(command: string, positionals: readonly string[]): void {
  if (positionals.length === 0) return;
  throw usageError(
    `unexpected argument ${describeValue(positionals[0])}`,
    `${command} takes flags only; see osm-healthcheck ${command} --help`,
  );
}

/** A flag's value, else the environment variable's, else undefined. Flags win over the environment. */
export function flagOrEnv(flag: string | undefined, envName: string): string | undefined {
  if (flag !== undefined) return flag;
  const fromEnv = process.env[envName];
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
}

/** A boolean flag, else its environment variable (true/false/1/0, any case), else false. */
export function flagOrEnvBoolean(flag: boolean | undefined, envName: string): boolean {
  if (flag !== undefined) return flag;
  const text = flagOrEnv(undefined, envName);
  return text === undefined ? false : parseBoolean(text, `env ${envName}`);
}

/** A boolean variable's text (true/false/1/0, any case), refused as `from` otherwise. */
export function parseBoolean(text: string, from: string): boolean {
  const value = text.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw badFlagValue(from, text, 'true or false');
}

/** How a usage error names a value flagOrEnv read: `flag` when it was given, else `env envName`. */
export function sourceName(flagValue: unknown, flag: string, envName: string): string {
  return flagValue === undefined ? `env ${envName}` : flag;
}

/**
 * What a pure reader (placementFlags, readCompanionCpuLimit) made of a flag, or its `invalid` as the usage error:
 * `prefix` goes before the reader's words (`--companion-cpu-limit `), `accepted` in the brackets after them.
 */
export function flagValue<T extends object>(
  read: T | { invalid: string },
  prefix: string,
  accepted: string,
): T {
  if ('invalid' in read && typeof read.invalid === 'string')
    throw usageError(`${prefix}${read.invalid}`, accepted);
  return read as T;
}
