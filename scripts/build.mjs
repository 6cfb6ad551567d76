// Bundles the CLI so start-up reads as few files as possible (see BENCHMARKS.md): dist/cli.mjs holds the help text
// and the dispatch, and each command is one self-contained file, dist/commands/<name>.mjs, read only when it runs.
// `serve` starts in every pod, so it loads exactly two files and never parses the webhook's Fastify, inject's YAML
// or init's execa. Code the commands share (errors, the table, pino) is copied into each: every extra file an ESM
// start-up reads cost more (about 7 ms over the five chunks esbuild's code splitting made) than the copies weigh.
// Nothing is left to node_modules: dist/ is all the image ships of the companion.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { common, leanKubeConfig, metricsBundle, schemaFreeFastify, serveBundle } from './bundle-options.mjs';
import {
  ALLOWED_FILE,
  bundledInputs,
  licenseProblems,
  NOTICES_FILE,
  noticesText,
  readPackages,
} from './third-party.mjs';

const COMMANDS = ['serve', 'wait', 'inject', 'init', 'node', 'webhook', 'check', 'analyze'];

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

// yaml's Node build reads process.env.LOG_TOKENS and LOG_STREAM (debug logging) once per token: a getter into
// the C++ environment that cost a sixth of parsing a manifest. Its ESM build, same code without those hooks,
// runs in Node as it is.
const yamlWithoutDebugHooks = {
  name: 'yaml-without-debug-hooks',
  setup(b) {
    b.onResolve({ filter: /^yaml$/ }, () => ({
      path: fileURLToPath(import.meta.resolve('yaml').replace(/dist\/index\.js$/, 'browser/index.js')),
    }));
  },
};

// Modules that analyze's dependencies require inside a try and do without: node-fetch's `encoding` (a charset
// conversion analyze never asks for) and debug's `supports-color` (colours in a log analyze never turns on; debug
// comes with the proxy agents). Neither is a dependency of ours: a development install may hold them (another
// package brings supports-color), the image's production install does not, so each is bundled, in every build, as
// the throw its requirer expects.
const OPTIONAL_REQUIRES = ['encoding', 'supports-color'];
const optionalRequires = {
  name: 'optional-requires',
  setup(b) {
    const filter = new RegExp(`^(${OPTIONAL_REQUIRES.join('|')})$`);
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'optional-requires' }));
    b.onLoad({ filter: /.*/, namespace: 'optional-requires' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not bundled`)});`,
      loader: 'js',
    }));
  },
};

const results = await Promise.all([
  build({ ...common, entryPoints: ['src/cli.ts'], plugins: [commandsExternal] }),
  // serve starts in every pod, and its metrics exposition loads on the first scrape: scripts/bundle-options.mjs.
  build(serveBundle()),
  build(metricsBundle()),
  build({
    ...common,
    entryPoints: COMMANDS.filter((name) => name !== 'serve').map((name) => `src/commands/${name}.ts`),
    plugins: [yamlWithoutDebugHooks, optionalRequires, leanKubeConfig, schemaFreeFastify],
  }),
]);

// Should the import above ever be renamed, prom-client would be bundled into serve again without a word.
const serveInputs = Object.keys(results[1].metafile.inputs);
const leaked = serveInputs.filter((input) => /node_modules[\\/]prom-client[\\/]/.test(input));
if (leaked.length > 0 || serveInputs.includes('src/metrics/registry.ts')) {
  throw new Error(
    `build: serve's bundle must not hold the metrics exposition, found ${leaked[0] ?? 'registry.ts'}`,
  );
}

// Should an app of ours build Fastify without the schema-free compilers again, or another Fastify path require
// Ajv, it would be back in a bundle (0.55 MB of the webhook's) without a word.
const SCHEMA_INPUT = /node_modules[\\/](ajv|fast-json-stringify)[\\/]index\.js$|node_modules[\\/]ajv[\\/]/;
for (const result of results) {
  for (const [output, { inputs }] of Object.entries(result.metafile.outputs)) {
    const schemas = Object.keys(inputs).find((input) => SCHEMA_INPUT.test(input));
    if (schemas !== undefined)
      throw new Error(`build: no bundle may hold a schema compiler, but ${output} holds ${schemas}`);
  }
}

// gRPC probes run on node:http2 (src/probe/grpc.ts); grpc-js is the tests' server. Should code under src/ import
// grpc-js again, every bundle that probes would carry its ~10 MiB of memory without a word.
const GRPC_INPUT = /node_modules[\\/](@grpc[\\/]|grpc-health-check[\\/]|protobufjs[\\/])/;
for (const result of results) {
  const grpcInput = Object.keys(result.metafile.inputs).find((input) => GRPC_INPUT.test(input));
  if (grpcInput !== undefined) {
    const output = Object.keys(result.metafile.outputs).join(', ');
    throw new Error(`build: no bundle may hold grpc-js, but ${output} holds ${grpcInput}`);
  }
}

// analyze's kubeconfig leaves client-node's generated models and node-fetch out (bundle-options.mjs's
// leanKubeConfig): should client-node import them from another file, they would come back without a word.
const KUBE_CONFIG_UNUSED =
  /node_modules[\\/](@kubernetes[\\/]client-node[\\/]dist[\\/]gen[\\/]|node-fetch[\\/])/;
for (const [output, { inputs }] of Object.entries(results[3].metafile.outputs)) {
  const unused = Object.keys(inputs).find((input) => KUBE_CONFIG_UNUSED.test(input));
  if (unused !== undefined) throw new Error(`build: ${output} holds ${unused}, which analyze never runs`);
}

// The image ships dist/ and no node_modules (Dockerfile): every import a bundle leaves to run time must be a Node
// built-in or another file of dist/. A dependency marked external, or a new one a bundle cannot inline, fails here.
const written = new Set(results.flatMap((r) => Object.keys(r.metafile.outputs)));
const ownFiles = new Set([...written].map((path) => basename(path)));
for (const result of results) {
  for (const [output, { imports }] of Object.entries(result.metafile.outputs)) {
    const outside = imports.find((i) => i.external && !isBuiltin(i.path) && !ownFiles.has(basename(i.path)));
    if (outside !== undefined) {
      throw new Error(
        `build: ${output} would load ${outside.path} at run time, which the image does not ship`,
      );
    }
  }
}

// Each bundled package's license text goes with dist/ (the npm package, the image), from what the bundles really
// hold: esbuild's metafile, kept in build/ for test/image/licenses.test.ts. A license the project has not accepted
// fails the build (scripts/third-party.mjs).
const metafile = {
  inputs: Object.fromEntries(
    results.flatMap((r) => Object.entries(r.metafile.inputs)).sort(([a], [b]) => a.localeCompare(b)),
  ),
  outputs: Object.fromEntries(results.flatMap((r) => Object.entries(r.metafile.outputs))),
};
const packages = readPackages(bundledInputs(metafile));
const problems = licenseProblems(packages, JSON.parse(readFileSync(ALLOWED_FILE, 'utf8')));
if (problems.length > 0) throw new Error(`build: third-party licenses:\n${problems.join('\n')}`);
const notices = join('dist', NOTICES_FILE);
writeFileSync(notices, noticesText(packages));
written.add(notices);
mkdirSync('build', { recursive: true });
writeFileSync('build/metafile.json', `${JSON.stringify(metafile, null, 1)}\n`);

// Remove what this build no longer writes (e.g. an older layout's dist/chunks), after writing, so a CLI started
// from the previous build keeps its files as long as possible.
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

// V8's code cache for serve's bundle, made by this Node in a child process whose V8 has a fixed random seed: with
// the seed of each process its own, two builds of one commit wrote two different caches (string hashes, which
// functions were compiled), so two different images. V8 leaves --random-seed out of the flag hash it checks a
// cache against, so the image's Node, started without it, still takes the cache (scripts/code-cache.mjs).
execFileSync(
  process.execPath,
  ['--random-seed=1', fileURLToPath(new URL('code-cache.mjs', import.meta.url))],
  {
    stdio: 'inherit',
  },
);
