// Bundles a test-side program (the app, the node's prober) into one .mjs under <repo>/node_modules/.cache, so
// `node` can run it inside a network namespace and its gRPC imports resolve from the repo's node_modules.

import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface Bundle {
  path: string;
  remove(): void;
}

export async function bundle(entry: URL): Promise<Bundle> {
  const dir = fileURLToPath(new URL('../../node_modules/.cache/osm-healthcheck-test/', import.meta.url));
  const name = basename(fileURLToPath(entry), '.ts');
  const path = `${dir}e2e-${name}-${process.pid}-${randomUUID().slice(0, 8)}.mjs`;
  await build({
    entryPoints: [fileURLToPath(entry)],
    outfile: path,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@grpc/grpc-js', 'grpc-health-check'],
    logLevel: 'error',
  });
  return { path, remove: () => rmSync(path, { force: true }) };
}
