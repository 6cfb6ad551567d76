// osm-healthcheck: argv -> subcommand. The only place that turns errors into exit codes and messages.

import pkg from '../package.json' with { type: 'json' };
import type { Command } from './commands/command.js';
import { initCommand } from './commands/init.js';
import { injectCommand } from './commands/inject.js';
import { serveCommand } from './commands/serve.js';
import { webhookCommand } from './commands/webhook.js';
import { HealthcheckError } from './errors.js';

const COMMANDS: readonly Command[] = [serveCommand, injectCommand, initCommand, webhookCommand];

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

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${help()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    process.stderr.write(`osm-healthcheck: unknown command "${name}"\n\n${help()}\n`);
    return 2;
  }
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
    if (err instanceof HealthcheckError) {
      process.stderr.write(`osm-healthcheck ${name}: ${err.message} [${err.code}]\n`);
      return err.code === 'OSM_HC_USAGE' ? 2 : 1;
    }
    process.stderr.write(
      `osm-healthcheck ${name}: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`,
    );
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`osm-healthcheck: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
