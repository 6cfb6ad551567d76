// Bundles the CLI so start-up reads as few files as possible (see BENCHMARKS.md): dist/cli.mjs holds the help text
// and the dispatch, and each command is one self-contained file, dist/commands/<name>.mjs, read only when it runs.
// `serve` starts in every pod, so it loads exactly two files and never parses the webhook's Fastify, inject's YAML
// or init's execa. Code the commands share (errors, the table, pino) is copied into each: every extra file an ESM
// start-up reads cost more (about 7 ms over the five chunks esbuild's code splitting made) than the copies weigh.
// gRPC stays external: it is loaded lazily, only when the probe table has a gRPC entry, and grpc-health-check reads
// its .proto from its own package directory.
import { readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { build } from 'esbuild';

const COMMANDS = ['serve', 'inject', 'init', 'webhook', 'check'];

// What serve's Fastify never runs, kept out of its bundle (issue 11; test/commands/bundle.test.ts checks it):
// the schema compilers (app.ts gives Fastify its own, so it never requires these) and light-my-request (inject()
// is for tests, which run the sources). Each is replaced by a module that throws if it is ever called.
const NOT_IN_SERVE = ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request'];
// Modules Fastify requires at load for features the companion never uses: https/http2 servers (lib/server.js),
// plugin version checks (semver), trustProxy (proxy-addr), and the JSON error serializer (its error handler is
// replaced by app.ts's). In serve's bundle each is required on first use instead: the https/http2 pair alone cost
// ~4 ms and 1 MiB per start, and TLS/HTTP/2 then load only when the probe table needs them (probe/http.ts, grpc.ts).
const LAZY_IN_FASTIFY = {
  'lib/server.js': ['node:https', 'node:http2'],
  'lib/plugin-utils.js': ['semver'],
  'lib/request.js': ['@fastify/proxy-addr'],
  'lib/error-handler.js': ['./error-serializer'],
};

const leanFastify = {
  name: 'lean-fastify',
  setup(b) {
    const filter = new RegExp(`^(${NOT_IN_SERVE.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'not-in-serve' }));
    b.onLoad({ filter: /.*/, namespace: 'not-in-serve' }, (args) => ({
      contents: `module.exports = function () { throw new Error(${JSON.stringify(`${args.path} is not bundled in serve`)}); };`,
      loader: 'js',
    }));
    b.onLoad({ filter: /[\\/]node_modules[\\/]fastify[\\/]lib[\\/][a-z-]+\.js$/ }, async (args) => {
      const file = `lib/${basename(args.path)}`;
      const lazy = LAZY_IN_FASTIFY[file];
      if (lazy === undefined) return undefined;
      let contents = await readFile(args.path, 'utf8');
      for (const name of lazy) {
        const eager = new RegExp(`const (\\w+) = require\\('${name.replace(/[/.]/g, '\\$&')}'\\)`);
        if (!eager.test(contents))
          throw new Error(`lean-fastify: fastify/${file} no longer requires ${name} eagerly`);
        // A function target, so a module that is itself a function (error-serializer) can still be called.
        contents = contents.replace(
          eager,
          `const $1 = new Proxy(function () {}, { get: (_, key) => require('${name}')[key], apply: (_, self, args) => require('${name}').apply(self, args) })`,
        );
      }
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

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

// serve's metrics exposition (prom-client: ~20 ms of start-up and MiB in every pod) is its own file, required on
// the first GET /metrics: load-exposition.ts's import('./registry.js') becomes require('./serve-metrics.cjs').
const METRICS_EXPOSITION = resolve('src/metrics/registry.ts');
const METRICS_FILE = 'serve-metrics.cjs';
const metricsExternal = {
  name: 'metrics-external',
  setup(b) {
    b.onResolve({ filter: /^\.\/registry\.js$/ }, (args) =>
      resolve(args.resolveDir, 'registry.ts') === METRICS_EXPOSITION
        ? { path: `./${METRICS_FILE}`, external: true }
        : undefined,
    );
  },
};

// prom-client's index requires what the exposition never uses: the Pushgateway (https, and so tls and crypto, and
// zlib), cluster aggregation and Summary (tdigest). Each is replaced by a module that throws if it is ever called:
// the first scrape then takes ~10 ms less CPU and leaves ~1 MiB less resident.
const NOT_IN_METRICS = ['./lib/pushgateway', './lib/cluster', './lib/summary'];
const leanPromClient = {
  name: 'lean-prom-client',
  setup(b) {
    const filter = new RegExp(`^(${NOT_IN_METRICS.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) =>
      /[\\/]node_modules[\\/]prom-client[\\/]index\.js$/.test(args.importer)
        ? { path: args.path, namespace: 'not-in-metrics' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'not-in-metrics' }, (args) => ({
      contents: `module.exports = function () { throw new Error(${JSON.stringify(`prom-client ${args.path} is not bundled in serve's metrics`)}); };`,
      loader: 'js',
    }));
  },
};

const results = await Promise.all([
  build({ ...common, entryPoints: ['src/cli.ts'], plugins: [commandsExternal] }),
  // serve starts in every pod: CommonJS in node's module wrapper, run by cli.ts through a vm.Script with V8's code
  // cache (src/command-loader.ts), and minified, which takes 0.9 MB of source out of every companion's memory.
  build({
    ...common,
    entryPoints: ['src/commands/serve.ts'],
    format: 'cjs',
    outExtension: { '.js': '.script.js' },
    minify: true,
    // import() becomes require(): V8 drops a vm.Script's dynamic-import callback when it takes the code cache
    // (Node 20: ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), and everything serve loads lazily is CommonJS or built in.
    supported: { 'dynamic-import': false },
    banner: { js: '(function (exports, require, module, __filename, __dirname) {' },
    footer: { js: '})' },
    plugins: [leanFastify, metricsExternal],
  }),
  build({
    ...common,
    entryPoints: [METRICS_EXPOSITION],
    outdir: undefined,
    outfile: `dist/commands/${METRICS_FILE}`,
    format: 'cjs',
    minify: true,
    banner: {},
    plugins: [leanPromClient],
  }),
  build({
    ...common,
    entryPoints: COMMANDS.filter((name) => name !== 'serve').map((name) => `src/commands/${name}.ts`),
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

// V8's code cache for serve's bundle, made by this Node: command-loader.ts uses it when the same Node runs serve
// (the image builds with its own Node), and compiles from source otherwise.
const loader = await build({
  entryPoints: ['src/command-loader.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  logLevel: 'warning',
});
const { writeBundleCache } = await import(
  `data:text/javascript,${encodeURIComponent(loader.outputFiles[0].text)}`
);
// The cache holds what V8 compiled by the time it is written, so first run serve's start-up for real (on loopback,
// ephemeral ports, logs off) and stop it as SIGTERM would, once its signal handlers show it is serving.
await writeBundleCache(join(process.cwd(), 'dist/commands/serve.script.js'), async ({ serveCommand }) => {
  process.env.OSM_HEALTHCHECK_PROBES = JSON.stringify({
    liveness: { app: { httpGet: { port: 1, path: '/live' } } },
    readiness: { app: { tcpSocket: { port: 1 } } },
  });
  const signals = process.listenerCount('SIGTERM');
  const serving = serveCommand.run(['--ports', '0,0,0,0', '--host', '127.0.0.1', '--log-level', 'error']);
  while (process.listenerCount('SIGTERM') === signals) await new Promise((resolve) => setTimeout(resolve, 5));
  process.emit('SIGTERM');
  await serving;
  delete process.env.OSM_HEALTHCHECK_PROBES;
});
