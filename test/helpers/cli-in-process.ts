// The CLI's dispatch (src/dispatch.ts) called in this process, with each command from its sources: for the many
// cases that end before a command does anything (usage errors), at the cost of a call instead of a node process.
// Everything written to stdout and stderr meanwhile is the answer; the environment is the case's for the call.
// A few cases in each suite still run the built binary (helpers/cli.ts), so the bundle is held to the same words.

import type { Command } from '../../src/commands/command.js';
import { type Entry, main } from '../../src/dispatch.js';
import type { Exit } from './cli.js';

const SOURCES: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('../../src/commands/serve.js')).serveCommand,
  wait: async () => (await import('../../src/commands/wait.js')).waitCommand,
  inject: async () => (await import('../../src/commands/inject.js')).injectCommand,
  init: async () => (await import('../../src/commands/init.js')).initCommand,
  node: async () => (await import('../../src/commands/node.js')).nodeCommand,
  webhook: async () => (await import('../../src/commands/webhook.js')).webhookCommand,
  check: async () => (await import('../../src/commands/check.js')).checkCommand,
  analyze: async () => (await import('../../src/commands/analyze.js')).analyzeCommand,
};

function fromSources(entry: Entry): Promise<Command> {
  const load = SOURCES[entry.name];
  if (load === undefined) throw new Error(`cli-in-process: no source for the command "${entry.name}"`);
  return load();
}

/**
 * `osm-healthcheck ...args` in this process with `env` set (an empty value is an unset variable, to the CLI as to
 * a shell): its exit status and what it wrote. Calls run one at a time: they share process.env and the streams.
 */
export async function runInProcess(args: string[], env: Record<string, string> = {}): Promise<Exit> {
  const saved = Object.keys(env).map((name) => [name, process.env[name]] as const);
  const written = { stdout: '', stderr: '' };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (stream: 'stdout' | 'stderr') =>
    ((chunk: string | Uint8Array) => {
      written[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    }) as typeof process.stdout.write;
  Object.assign(process.env, env);
  process.stdout.write = capture('stdout');
  process.stderr.write = capture('stderr');
  try {
    const code = await main(args, fromSources);
    return { code, ...written };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
