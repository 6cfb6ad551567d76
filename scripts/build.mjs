// Bundles the CLI so start-up reads as few files as possible (see BENCHMARKS.md): dist/cli.mjs holds the help text
// and the dispatch, and each command is one self-contained file, dist/commands/<name>.mjs, read only when it runs.
// `serve` starts in every pod, so it loads exactly two files and never parses the webhook's Fastify, inject's YAML
// or init's execa. Code the commands share (errors, the table, pino) is copied into each: every extra file an ESM
// start-up reads cost more (about 7 ms over the five chunks esbuild's code splitting made) than the copies weigh.
// gRPC stays external: it is loaded lazily, only when the probe table has a gRPC entry, and grpc-health-check reads
// its .proto from its own package directory.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const COMMANDS = ['serve', 'wait', 'inject', 'init', 'webhook'];

const common = {
  outdir: 'dist',
  entryNames: '[dir]/[name]',
  outbase: 'src',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: false,
  legalComments: 'none',
  metafile: true,
  external: ['@grpc/grpc-js', 'grpc-health-check'],
  banner: {
    js: [
      '#!/usr/bin/env node',
      "import { createRequire as __cr } from 'node:module';",
      'const require = __cr(import.meta.url);',
    ].join('\n'),
  },
  logLevel: 'warning',
};

// cli.ts imports each command dynamically: point those imports at the command files built below.
const commandsExternal = {
  name: 'commands-external',
  setup(b) {
    b.onResolve({ filter: /^\.\/commands\/[a-z]+\.js$/ }, (args) => {
      const name = args.path.slice('./commands/'.length, -'.js'.length);
      return COMMANDS.includes(name) ? { path: `./commands/${name}.mjs`, external: true } : undefined;
    });
  },
};

const results = await Promise.all([
  build({ ...common, entryPoints: ['src/cli.ts'], plugins: [commandsExternal] }),
  build({ ...common, entryPoints: COMMANDS.map((name) => `src/commands/${name}.ts`) }),
]);

// Remove what this build no longer writes (e.g. an older layout's dist/chunks), after writing, so a CLI started
// from the previous build keeps its files as long as possible.
const written = new Set(results.flatMap((r) => Object.keys(r.metafile.outputs)));
function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (!written.has(path)) rmSync(path, { force: true });
  }
}
prune('dist');
