// `npm run demo`: the companion with examples/probes.json in front of examples/app.mjs, on the real ports.
// Prints what kubelet would receive for each probe, then keeps serving until Ctrl-C (`--once`: exit instead).

import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const once = process.argv.includes('--once');
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
      const app = await Promise.all([14001, 14002, 14003].map(accepts));
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
    const { status, body } = await fetchText(port, path, headers);
    process.stdout.write(`$ ${label}\n${status} ${body}\n`);
  }
  if (once) stop(0);
  else process.stdout.write('\ndemo: serving on 15901-15904; try the curl lines above. Ctrl-C stops.\n');
} catch (err) {
  process.stderr.write(`demo: ${err.message}\n`);
  stop(1);
}
