// serve's and the webhook's bundles as shipped: what Fastify never runs stays out of them, and the V8 code cache the
// build writes beside serve's is taken by the Node that built it (and a bad one is ignored), as the CLI loads it.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_IN_SERVE, SCHEMA_COMPILERS, serveBundle } from '../../scripts/bundle-options.mjs';
import { ROOT, runScript } from '../helpers/cli.js';

const SERVE = join(ROOT, 'dist/commands/serve.script.js');
let inputs: string[];
let text: string;
let scratch: string;

beforeAll(async () => {
  const result = await build({ ...serveBundle(), absWorkingDir: ROOT, write: false });
  inputs = Object.keys(result.metafile.inputs);
  text = result.outputFiles.find((f) => f.path.endsWith('serve.script.js'))?.text ?? '';
  scratch = mkdtempSync(join(tmpdir(), 'osm-hc-bundle-'));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("serve's bundle", () => {
  it('is what the build wrote to dist/', () => {
    expect(text.length).toBeGreaterThan(0);
    expect(readFileSync(SERVE, 'utf8')).toBe(text);
  });

  it.each<{ name: string; dir: string; present?: boolean }>([
    ...NOT_IN_SERVE.map((name) => ({ name, dir: `node_modules/${name}/` })),
    { name: 'ajv (the schema compilers bring it)', dir: 'node_modules/ajv/' },
    {
      name: 'fast-json-stringify, but for the serializer of the error handler',
      dir: 'node_modules/fast-json-stringify/index.js',
    },
    { name: 'avvio is in (Fastify needs it): the check can fail', dir: 'node_modules/avvio/', present: true },
  ])('$name', ({ dir, present }) => {
    expect(inputs.some((input) => input.startsWith(dir))).toBe(present === true);
  });

  it('keeps a stand-in for each module left out, that says so if it is ever called', () => {
    for (const name of NOT_IN_SERVE) expect(text).toContain(`${name} is not bundled in serve`);
  });
});

describe("the webhook's bundle", () => {
  // Unminified, esbuild heads each module it inlines with a `// node_modules/...` line: what the bundle holds.
  const held = (dir: string) =>
    readFileSync(join(ROOT, 'dist/commands/webhook.mjs'), 'utf8').includes(`\n// node_modules/${dir}`);

  it.each<{ name: string; dir: string; present?: boolean }>([
    { name: 'no Ajv (src/schema-free.ts gives Fastify its compilers)', dir: 'ajv/' },
    { name: 'no fast-json-stringify but for the error serializer', dir: 'fast-json-stringify/index.js' },
    ...SCHEMA_COMPILERS.map((name) => ({ name: `no ${name}`, dir: `${name}/` })),
    { name: "no client-node (kube/api/'s in-cluster client reads the pod's token)", dir: '@kubernetes/' },
    { name: 'avvio is in (Fastify needs it): the check can fail', dir: 'avvio/', present: true },
  ])('$name', ({ dir, present }) => {
    expect(held(dir)).toBe(present === true);
  });
});

describe("serve's code cache", () => {
  // The loader as the CLI has it, run by a plain `node` (vitest's own workers run with flags V8 hashes into the cache).
  async function load(cache: Buffer | undefined): Promise<string> {
    const dir = mkdtempSync(join(scratch, 'case-'));
    const bundle = join(dir, 'serve.script.js');
    writeFileSync(bundle, readFileSync(SERVE));
    if (cache !== undefined) writeFileSync(`${bundle}.v8cache`, cache);
    const loader = await build({
      entryPoints: [join(ROOT, 'src/command-loader.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
    });
    const script = join(dir, 'load.mjs');
    writeFileSync(
      script,
      `${loader.outputFiles[0]?.text}\nconst l = loadBundle(${JSON.stringify(bundle)});\n` +
        'console.log(JSON.stringify({ cached: l.cached, serve: typeof l.exports.serveCommand?.run }));\n',
    );
    const exit = await runScript(script, []);
    expect(exit.stderr).toBe('');
    return exit.stdout.trim();
  }

  it('is taken by the Node that built it', async () => {
    const cache = readFileSync(`${SERVE}.v8cache`);
    expect(await load(cache)).toBe(JSON.stringify({ cached: true, serve: 'function' }));
  });

  it.each([
    { name: 'no cache file', cache: undefined },
    { name: 'a cache of another build (garbage)', cache: Buffer.alloc(4096, 7) },
    { name: 'an empty cache file', cache: Buffer.alloc(0) },
  ])('compiles from source with $name', async ({ cache }) => {
    expect(await load(cache)).toBe(JSON.stringify({ cached: false, serve: 'function' }));
  });
});
