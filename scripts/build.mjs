// Bundles the CLI into one file so start-up reads one module instead of hundreds (see BENCHMARKS.md).
// gRPC stays external: it is loaded lazily, only when the probe table has a gRPC entry, and
// grpc-health-check reads its .proto from its own package directory at run time.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: false,
  legalComments: 'none',
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
