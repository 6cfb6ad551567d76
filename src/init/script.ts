// Runs init/osm-healthcheck-init.sh through execa: finds it from src/ or from the bundled dist/cli.mjs, bounds
// it with a timeout, passes its notes on and turns a failure into one error carrying the script's own message.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { HealthcheckError } from '../errors.js';
import { usageError } from '../flags.js';

export const INIT_SCRIPT = 'osm-healthcheck-init.sh';
/** Overrides where the init scripts live (a directory holding osm-healthcheck-init.sh). */
export const INIT_DIR_ENV = 'OSM_HEALTHCHECK_INIT_DIR';
/** The script waits at most 10 s per family for the xtables lock; everything else takes milliseconds. */
export const INIT_TIMEOUT_MS = 30_000;

/** The node agent's script (`osm-healthcheck node`), beside the init script in init/. */
export const NODE_SCRIPT = 'osm-healthcheck-node.sh';

// Lines a script writes to stderr start with its name; the error we raise carries only the message.
const NOTE_PREFIX = /^osm-healthcheck-(?:init|node): /;

/**
 * The `init/` directory of this package: `$OSM_HEALTHCHECK_INIT_DIR`, else the nearest `init/` holding the script
 * above this module. That is `<pkg>/init` both from `src/init/script.ts` (vitest) and from `dist/cli.mjs`.
 */
export function findInitDir(
  from: string | URL = import.meta.url,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const override = env[INIT_DIR_ENV];
  if (override !== undefined && override !== '') return override;
  const start = dirname(fileURLToPath(from));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'init', INIT_SCRIPT))) return join(dir, 'init');
    if (dirname(dir) === dir) break;
  }
  throw new HealthcheckError(
    'OSM_HC_INIT',
    `cannot find init/${INIT_SCRIPT} above ${start}; set ${INIT_DIR_ENV}`,
  );
}

export interface RunScriptOptions {
  /** Default: findInitDir(). */
  initDir?: string;
  timeoutMs?: number;
  /** Each stderr line the script wrote besides its final error: decisions and warnings. */
  onNote?: (line: string) => void;
  /** Default: INIT_SCRIPT. */
  script?: typeof INIT_SCRIPT | typeof NODE_SCRIPT;
}

/** Runs the script with `args`; resolves with its stdout (the rules on --dry-run), exactly as written. */
export async function runInitScript(
  args: readonly string[],
  options: RunScriptOptions = {},
): Promise<string> {
  const name = options.script ?? INIT_SCRIPT;
  const script = join(options.initDir ?? findInitDir(), name);
  const code = name === NODE_SCRIPT ? 'OSM_HC_NODE' : 'OSM_HC_INIT';
  const timeoutMs = options.timeoutMs ?? INIT_TIMEOUT_MS;
  // Through `sh`, so neither the package's file modes nor a noexec mount matter.
  const result = await execa('sh', [script, ...args], {
    reject: false,
    timeout: timeoutMs,
    forceKillAfterDelay: 2_000,
    stdin: 'ignore',
    stripFinalNewline: false,
    env: { LC_ALL: 'C' },
  });
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  const failed = result.exitCode !== 0 || result.timedOut || result.failed;
  const notes = failed && !result.timedOut ? lines.slice(0, -1) : lines;
  for (const line of notes) options.onNote?.(line);
  if (!failed) return result.stdout;

  if (result.timedOut) {
    throw new HealthcheckError(code, `${name} did not finish within ${timeoutMs} ms`, {
      cause: result,
    });
  }
  if (result.exitCode === undefined) {
    const why =
      result.signal === undefined
        ? `cannot run sh ${script}: ${result.originalMessage}`
        : `${name} was killed by ${result.signal}`;
    throw new HealthcheckError(code, why, { cause: result });
  }
  const last = lines.at(-1);
  const message =
    last === undefined
      ? `${name} exited with code ${result.exitCode} and no message`
      : last.replace(NOTE_PREFIX, '');
  // Exit 2 is the script's own usage check; it only fires when our flag validation let something through.
  if (result.exitCode === 2) {
    throw usageError(
      `${name} refused its arguments: ${message}`,
      `the flags osm-healthcheck ${name === NODE_SCRIPT ? 'node' : 'init'} --help lists`,
      {
        cause: result,
      },
    );
  }
  throw new HealthcheckError(code, message, { cause: result });
}
