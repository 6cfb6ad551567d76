// Bundles src/cli.ts as scripts/build.mjs does, so the network-namespace suites run the real CLI built from the
// current sources. The bundle sits under <repo>/node_modules/.cache, so it finds <repo>/init by walking up
// exactly as dist/cli.mjs does, and its external gRPC imports resolve.

import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface CliBundle {
  path: string;
  remove(): void;
}

export async function bundleCli(): Promise<CliBundle> {
  const dir = fileURLToPath(new URL('../../node_modules/.cache/osm-healthcheck-test/', import.meta.url));
  const path = `${dir}cli-${process.pid}-${randomUUID().slice(0, 8)}.mjs`;
  await build({
    entryPoints: [fileURLToPath(new URL('../../src/cli.ts', import.meta.url))],
    outfile: path,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@grpc/grpc-js', 'grpc-health-check'],
    banner: {
      js: "import { createRequire as __cr } from 'node:module';\nconst require = __cr(import.meta.url);",
    },
    logLevel: 'error',
  });
  return { path, remove: () => rmSync(path, { force: true }) };
}
