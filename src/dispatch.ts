// osm-healthcheck: argv -> subcommand. The only place that turns errors into exit codes and messages; cli.ts runs
// it as the process. Pure of the process but for what it writes: the tests call main() in-process.

import { fileURLToPath } from 'node:url';
import pkg from '../package.json' with { type: 'json' };
import { loadBundle } from './command-loader.js';
import type { Command } from './commands/command.js';
import { type ErrorCode, isHealthcheckError } from './errors.js';

// Each command is loaded only when it runs, from its own file (scripts/build.mjs): `serve` starts in every pod
// and must not parse the webhook's Fastify, inject's YAML or init's execa (BENCHMARKS.md, start-up).
export interface Entry {
  name: string;
  /** One line for `osm-healthcheck --help`. */
  summary: string;
  load(): Promise<Command>;
  /** Exit codes other than the usual (2 for OSM_HC_USAGE, 1 for the rest) this command gives an error. */
  exitCodes?: Partial<Record<ErrorCode, number>>;
}

export const COMMANDS: readonly Entry[] = [
  {
    name: 'serve',
    summary: 'run the companion: kubelet-exact probes on ports 15901-15904',
    // Starts in every pod: loaded with the V8 code cache the build wrote beside it (command-loader.ts).
    load: async () => {
      const bundle = fileURLToPath(new URL('./commands/serve.script.js', import.meta.url));
      return (loadBundle(bundle).exports as typeof import('./commands/serve.js')).serveCommand;
    },
  },
  {
    name: 'wait',
    summary: "wait until the companion listens (the companion's postStart hook)",
    load: async () => (await import('./commands/wait.js')).waitCommand,
  },
  {
    name: 'inject',
    summary: 'rewrite the probes of workload manifests and add the companion',
    load: async () => (await import('./commands/inject.js')).injectCommand,
  },
  {
    name: 'init',
    summary:
      "let kubelet's and the companion's probes bypass the mesh proxy (iptables; init container, root)",
    load: async () => (await import('./commands/init.js')).initCommand,
  },
  {
    name: 'node',
    summary:
      "the node agent (DaemonSet, hostNetwork): SNAT kubelet's probes to a source sealed pods admit (root)",
    load: async () => (await import('./commands/node.js')).nodeCommand,
  },
  {
    name: 'webhook',
    summary: 'run the mutating admission webhook that applies inject to every new pod',
    load: async () => (await import('./commands/webhook.js')).webhookCommand,
  },
  {
    name: 'check',
    summary: "run the probe table's probes once and say what kubelet would conclude, and why",
    load: async () => (await import('./commands/check.js')).checkCommand,
    // Exit 1 means "a probe failed", so a table check cannot read is told apart from it.
    exitCodes: { OSM_HC_TABLE: 2 },
  },
  {
    name: 'analyze',
    summary: 'find the pods that slipped past the webhook or run an old companion, and check the install',
    load: async () => (await import('./commands/analyze.js')).analyzeCommand,
    // 1 means "something needs action"; a cluster it cannot reach is told apart from it.
    exitCodes: { OSM_HC_CLUSTER: 3, OSM_HC_PROMETHEUS: 3 },
  },
];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `osm-healthcheck ${pkg.version}: kubelet-exact health probes behind a service-mesh sidecar`,
    '',
    'Usage: osm-healthcheck <command> [flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `osm-healthcheck <command> --help` for the flags of a command.',
  ].join('\n');
}

/**
 * The exit status of `osm-healthcheck ...argv`, its words written to stdout and stderr. `load` gets a command's
 * code (the tests give the sources; the bundle reads dist/commands/).
 */
export async function main(
  argv: readonly string[],
  load: (entry: Entry) => Promise<Command> = (entry) => entry.load(),
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${help()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) {
    // The one usage-error shape (flags.ts), with no command to name: what is wrong (what is accepted) [code].
    const accepted = COMMANDS.map((c) => c.name).join(', ');
    process.stderr.write(
      `osm-healthcheck: unknown command ${JSON.stringify(name)} (${accepted}) [OSM_HC_USAGE]\n\n${help()}\n`,
    );
    return 2;
  }
  const command = await load(entry);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  if (rest.includes('--version')) {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  try {
    await command.run(rest);
    return 0;
  } catch (err) {
    if (isHealthcheckError(err)) {
      process.stderr.write(`osm-healthcheck ${name}: ${err.message} [${err.code}]\n`);
      return entry.exitCodes?.[err.code] ?? (err.code === 'OSM_HC_USAGE' ? 2 : 1);
    }
    process.stderr.write(
      `osm-healthcheck ${name}: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`,
    );
    return 1;
  }
}
