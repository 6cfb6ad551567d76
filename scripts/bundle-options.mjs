// esbuild options of the bundles scripts/build.mjs writes (test/commands/bundle.test.ts checks what goes in).
// serve starts in every pod, so its bundle is lean: CommonJS in node's module wrapper, run by cli.ts through a
// vm.Script with V8's code cache (src/command-loader.ts), minified (0.5 MB less source in every companion's memory),
// and without the parts of Fastify the companion never runs.
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';

// Fastify's schema compilers: our apps give Fastify their own (src/schema-free.ts), so it never requires these,
// and no bundle carries Ajv or fast-json-stringify (test/commands/bundle.test.ts checks serve's and the webhook's).
export const SCHEMA_COMPILERS = ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'];
// What serve's Fastify never runs, kept out of its bundle: the schema compilers and light-my-request (inject() is
// for tests, which run the sources). Each is replaced by a module that throws if it is ever called.
export const NOT_IN_SERVE = [...SCHEMA_COMPILERS, 'light-my-request'];
// Modules Fastify requires at load for features the companion never uses: https/http2 servers (lib/server.js),
// plugin version checks (semver), trustProxy (proxy-addr), and the JSON error serializer (its error handler is
// replaced by server/instance.ts's). In serve's bundle each is required on first use instead: the https/http2
// pair alone cost ~4 ms and 1 MiB per start, and TLS/HTTP/2 then load only when the probe table needs them
// (probe/http.ts, grpc.ts).
const LAZY_IN_FASTIFY = {
  'lib/server.js': ['node:https', 'node:http2'],
  'lib/plugin-utils.js': ['semver'],
  'lib/request.js': ['@fastify/proxy-addr'],
  'lib/error-handler.js': ['./error-serializer'],
};

/** Each of `names`, wherever it is required, resolved to a module that throws if it is ever called. */
function leftOut(b, names, bundle) {
  const filter = new RegExp(`^(${names.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})$`);
  const namespace = `not-in-${bundle.replace(/\W+/g, '-')}`;
  b.onResolve({ filter }, (args) => ({ path: args.path, namespace }));
  b.onLoad({ filter: /.*/, namespace }, (args) => ({
    contents: `module.exports = function () { throw new Error(${JSON.stringify(`${args.path} is not bundled in ${bundle}`)}); };`,
    loader: 'js',
  }));
}

/** The other commands' Fastify (the webhook's): without the schema compilers it is never given. */
/** @type {import('esbuild').Plugin} */
export const schemaFreeFastify = {
  name: 'schema-free-fastify',
  setup(b) {
    leftOut(b, SCHEMA_COMPILERS, 'the webhook');
  },
};

/** @type {import('esbuild').Plugin} */
const leanFastify = {
  name: 'lean-fastify',
  setup(b) {
    leftOut(b, NOT_IN_SERVE, 'serve');
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

// serve's metrics exposition (prom-client: ~20 ms of start-up and MiB in every pod) is its own file, required on
// the first GET /metrics: load-exposition.ts's import('./registry.js') becomes require('./serve-metrics.cjs').
const METRICS_EXPOSITION = resolve('src/metrics/registry.ts');
const METRICS_FILE = 'serve-metrics.cjs';
/** @type {import('esbuild').Plugin} */
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
/** @type {import('esbuild').Plugin} */
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

/** What every bundle shares: ESM for node, one self-contained file each, nothing left in node_modules. */
/** @type {import('esbuild').BuildOptions & { metafile: true }} */
export const common = {
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
  banner: {
    js: [
      '#!/usr/bin/env node',
      "import { createRequire as __cr } from 'node:module';",
      'const require = __cr(import.meta.url);',
    ].join('\n'),
  },
  logLevel: 'warning',
};

/** esbuild options for dist/commands/serve.script.js, on top of the options every command shares. */
/** @returns {import('esbuild').BuildOptions & { metafile: true }} */
export function serveBundle() {
  return {
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
  };
}

/** A CommonJS file beside the commands, minified, that a command requires only on first use. */
function lazyCjsBundle(entryPoint, file, plugins) {
  return {
    ...common,
    entryPoints: [entryPoint],
    outdir: undefined,
    outfile: `dist/commands/${file}`,
    format: 'cjs',
    minify: true,
    banner: {},
    plugins,
  };
}

/** esbuild options for dist/commands/serve-metrics.cjs, which serve requires on the first GET /metrics. */
export function metricsBundle() {
  return lazyCjsBundle(METRICS_EXPOSITION, METRICS_FILE, [leanPromClient]);
}

// What analyze's kubeconfig (@kubernetes/client-node's dist/config.js) imports at load and analyze never runs:
// the generated API models and their ObjectSerializer (~0.5 MB of source, thousands of classes made at load) are
// for makeApiClient, and node-fetch (with whatwg-url and tr46, and Node 24's deprecation warning for punycode) is
// for applyToFetchOptions; analyze sends its own requests after applyToHTTPSOptions (src/analyze/kube-client.ts).
// Each is replaced by a module whose exports throw if they are ever called.
const NOT_IN_ANALYZE = {
  './gen/index.js': ['createConfiguration', 'ServerConfiguration'],
  'node-fetch': ['Headers'],
};
// A kubeconfig's proxy-url still works: its agents (socks with its IP parsing, hpagent) load on first use.
const LAZY_IN_KUBE_CONFIG = {
  'socks-proxy-agent': ['SocksProxyAgent'],
  hpagent: ['HttpProxyAgent', 'HttpsProxyAgent'],
};
const KUBE_CONFIG = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/;

/** @type {import('esbuild').Plugin} */
export const leanKubeConfig = {
  name: 'lean-kube-config',
  setup(b) {
    const names = [...Object.keys(NOT_IN_ANALYZE), ...Object.keys(LAZY_IN_KUBE_CONFIG)];
    const filter = new RegExp(`^(${names.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) =>
      KUBE_CONFIG.test(args.importer)
        ? { path: args.path, namespace: 'kube-config', pluginData: { resolveDir: args.resolveDir } }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'kube-config' }, (args) => {
      const gone = NOT_IN_ANALYZE[args.path];
      const lines =
        gone === undefined
          ? LAZY_IN_KUBE_CONFIG[args.path].map(
              (name) =>
                `export function ${name}(...args) { return new (require(${JSON.stringify(args.path)}).${name})(...args); }`,
            )
          : gone.map(
              (name) =>
                `export function ${name}() { throw new Error(${JSON.stringify(`${args.path}'s ${name} is not bundled in analyze`)}); }`,
            );
      return { contents: lines.join('\n'), loader: 'js', resolveDir: args.pluginData.resolveDir };
    });
  },
};
