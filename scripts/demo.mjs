// `npm run demo`: the companion with examples/probes.json in front of examples/app.mjs, on the real ports.
// Checks first that every port is free (else says which is taken, and starts nothing), prints each curl and what
// it prints, as a terminal shows them, then keeps serving until Ctrl-C (`--once`: exit instead).

import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const once = process.argv.includes('--once');
/** examples/app.mjs's HTTP, TCP and gRPC ports (examples/probes.json names them), and the companion's four. */
const APP_PORTS = [14001, 14002, 14003];
const COMPANION_PORTS = [15901, 15902, 15903, 15904];
const children = [];

function start(args, env = {}) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`demo: ${args.join(' ')} exited (${signal ?? code}); stopping\n`);
      stop(1);
    }
  });
  return child;
}

function fetchText(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, body: body.trim() }));
    });
    req.on('error', reject);
    req.setTimeout(3000, () => req.destroy(new Error('timeout')));
  });
}

/** Why `port` cannot be listened on (all interfaces, as the app and the companion listen), or undefined. */
function taken(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err) => resolve(err.code ?? err.message));
    server.listen({ port }, () => server.close(() => resolve(undefined)));
  });
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

// Both sides must be up before the first curl: the companion (/healthz) and the app (its three ports), whichever
// starts last (the app loads grpc-js; the companion starts from a code cache).
async function waitReady() {
  for (let i = 0; i < 100; i++) {
    try {
      const app = await Promise.all(APP_PORTS.map(accepts));
      if (app.every(Boolean) && (await fetchText(15904, '/healthz')).status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the companion (/healthz on 15904) and the app (14001-14003) were not both up within 10 s');
}

let stopping = false;
function stop(code) {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  process.exitCode = code;
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

// Before anything else: with a port taken (another demo, most often), the curls below would reach whatever holds it.
const busy = [];
for (const port of [...APP_PORTS, ...COMPANION_PORTS]) {
  const why = await taken(port);
  if (why !== undefined) busy.push(`${port} (${why})`);
}
if (busy.length > 0) {
  process.stderr.write(
    `demo: cannot listen on ${busy.join(', ')}: another demo, or something else, holds ${busy.length === 1 ? 'it' : 'them'}; stop that and run the demo again\n`,
  );
  process.exit(1);
}

start(['examples/app.mjs']);
start(['dist/cli.mjs', 'serve', '--probes', 'examples/probes.json', '--log-level', 'warn']);
try {
  await waitReady();
  const checks = [
    ['curl localhost:15901/osm-liveness-probe', 15901, '/osm-liveness-probe', {}],
    ['curl localhost:15902/osm-readiness-probe', 15902, '/osm-readiness-probe', {}],
    ['curl localhost:15903/osm-startup-probe', 15903, '/osm-startup-probe', {}],
    [
      "curl -H 'Original-Tcp-Port: 14002' localhost:15904/osm-healthcheck",
      15904,
      '/osm-healthcheck',
      { 'Original-Tcp-Port': '14002' },
    ],
  ];
  for (const [label, port, path, headers] of checks) {
    // What curl prints: the body alone (kubelet reads the status; a passing probe's is 200, or the app's own).
    const { body } = await fetchText(port, path, headers);
    process.stdout.write(`$ ${label}\n${body}\n`);
  }
  if (once) stop(0);
  else process.stdout.write('\ndemo: serving on 15901-15904; try the curl lines above. Ctrl-C stops.\n');
} catch (err) {
  process.stderr.write(`demo: ${err.message}\n`);
  stop(1);
}
