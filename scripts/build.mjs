// Bundles the CLI so start-up reads a few files instead of hundreds (see BENCHMARKS.md). Code splitting: a module
// that src/cli.ts imports dynamically becomes its own chunk under dist/chunks, read only when it runs, so a
// command loaded that way costs the others nothing at start-up. gRPC stays external: it is loaded lazily, only
// when the probe table has a gRPC entry, and grpc-health-check reads its .proto from its own package directory.
import { readdirSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const result = await build({
  entryPoints: { cli: 'src/cli.ts' },
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
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
});

// Chunk names carry a content hash: remove the ones this build no longer wrote (after writing, so a CLI
// started from the previous build keeps its chunks as long as possible).
const written = new Set(Object.keys(result.metafile.outputs));
try {
  for (const name of readdirSync('dist/chunks')) {
    if (!written.has(`dist/chunks/${name}`)) rmSync(`dist/chunks/${name}`, { force: true });
  }
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
