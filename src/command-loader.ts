// Loads serve's bundle with V8's code cache, written beside it at build time, so a start skips compiling the
// ~400 KB that Fastify and pino bring (BENCHMARKS.md, start-up). Node 22+ has a compile cache built in
// (module.enableCompileCache), Node 20 has none, and a pod's root filesystem is read-only: so scripts/build.mjs
// makes the cache once, with the Node that builds, and a cache from another Node or V8 is simply not used.
//
// The bundle is CommonJS already wrapped in node's module function, `(function (exports, require, module,
// __filename, __dirname) { … })`, so the source is compiled as read, without the copy Module.wrap would make.

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

export interface Loaded {
  exports: unknown;
  /** true: V8 took the cache; false: compiled from source (no cache, or one made by another Node). */
  cached: boolean;
  script: Script;
}

export const cacheFile = (file: string): string => `${file}.v8cache`;

/**
 * Runs a wrapped CommonJS bundle as node's own loader would, with the code cache when V8 accepts it. `scriptName`
 * names the compiled script (V8 writes it into a cache made from it; a cache is taken whatever name it holds).
 */
export function loadBundle(file: string, scriptName = file): Loaded {
  const source = readFileSync(file, 'utf8');
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile(file));
  } catch {
    cachedData = undefined;
  }
  // No importModuleDynamically: V8 drops it when it takes the cache, so the bundle has no import() (build.mjs).
  const script = new Script(source, { filename: scriptName, cachedData });
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return { exports: module.exports, cached: cachedData !== undefined && !script.cachedDataRejected, script };
}

/**
 * Loads the bundle, lets `warm` run what a start runs, and writes what V8 has compiled by then as the cache. The
 * script is named `scriptName`, not the path it is built at, so the cache's bytes do not depend on where the build
 * ran (the image's digest does on them).
 */
export async function writeBundleCache(
  file: string,
  scriptName: string,
  warm: (exports: unknown) => Promise<void>,
): Promise<number> {
  const loaded = loadBundle(file, scriptName);
  await warm(loaded.exports);
  const data = loaded.script.createCachedData();
  writeFileSync(cacheFile(file), data);
  return data.length;
}
