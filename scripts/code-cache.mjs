// Writes V8's code cache for serve's bundle (dist/commands/serve.script.js.v8cache), run by scripts/build.mjs with
// the Node that builds, so the cache is that Node's: command-loader.ts uses it when the same Node runs serve (the
// image builds with its own Node), and compiles from source otherwise. build.mjs starts it with --random-seed=1, so
// the same commit and Node write the same bytes (the image's digest depends on them).
import { join } from 'node:path';
import { build } from 'esbuild';

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
// Named as the image runs it, wherever this build runs: the name is written into the cache.
const IN_IMAGE = '/app/dist/commands/serve.script.js';
await writeBundleCache(
  join(process.cwd(), 'dist/commands/serve.script.js'),
  IN_IMAGE,
  async ({ serveCommand }) => {
    process.env.OSM_HEALTHCHECK_PROBES = JSON.stringify({
      liveness: { app: { httpGet: { port: 1, path: '/live' } } },
      readiness: { app: { tcpSocket: { port: 1 } } },
    });
    const signals = process.listenerCount('SIGTERM');
    const serving = serveCommand.run(['--ports', '0,0,0,0', '--host', '127.0.0.1', '--log-level', 'error']);
    while (process.listenerCount('SIGTERM') === signals)
      await new Promise((resolve) => setTimeout(resolve, 5));
    process.emit('SIGTERM');
    await serving;
    delete process.env.OSM_HEALTHCHECK_PROBES;
  },
);
