// The companion's start-up inside images (scripts/image-measure.sh): `serve` runs from each image's root
// filesystem, as the image runs it (chroot, uid 65532, the image's env only, its own /usr/local/bin/node), and is
// timed from spawn to /healthz answering 200. Rounds alternate between the images so both see the same machine.
// Each round also starts serve with a gRPC entry (serve loads gRPC before it listens: what the bundle changes)
// and then times gRPC probes through it against a SERVING app on loopback.
// Usage: node bench/image-startup.mjs [--starts N] LABEL=ROOTFS ...   (as root; prints one JSON object)

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { httpProbe } from './clients.mjs';
import { summary } from './stats.mjs';

const { values, positionals } = parseArgs({
  options: { starts: { type: 'string', default: '10' } },
  allowPositionals: true,
});
const images = positionals.map((arg) => {
  const [label, rootfs] = arg.split('=');
  if (!label || !rootfs) throw new Error(`image-startup: expected LABEL=ROOTFS, got ${arg}`);
  return { label, rootfs };
});
const starts = Number(values.starts);
const PROBES = 20;
const IMAGE_ENV = [
  'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  'NODE_ENV=production',
];

/** The app: bench/app.mjs (a gRPC health server answering SERVING) on loopback, which a chroot shares. */
async function startApp() {
  const app = spawn(process.execPath, [new URL('./app.mjs', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = await once(createInterface({ input: app.stdout }), 'line');
  return { app, ports: JSON.parse(line) };
}

/** Starts serve in `rootfs` with `table`; resolves with its ports and ms from spawn to /healthz 200. */
async function startServe(rootfs, table) {
  const start = performance.now();
  // A private mount namespace gives the chroot /proc and /dev as a container has them, gone when it exits.
  const inner = `mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec chroot --userspec=65532:65532 "$0" \
    /usr/bin/env -i ${IMAGE_ENV.join(' ')} OSM_HEALTHCHECK_PORTS=0,0,0,0 OSM_HEALTHCHECK_HOST=127.0.0.1 \
    OSM_HEALTHCHECK_PROBES="$1" node /app/dist/cli.mjs serve`;
  const child = spawn('unshare', ['--mount', '--', 'sh', '-c', inner, rootfs, JSON.stringify(table)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`serve in ${rootfs} exited ${code} before it was serving`);
  });
  const serving = new Promise((resolve) =>
    lines.on('line', (line) => {
      if (line.includes('"msg":"serving"')) resolve(JSON.parse(line).ports);
    }),
  );
  const ports = await Promise.race([serving, exited]);
  exited.catch(() => {});
  const healthz = await httpProbe(ports.healthcheck, '/healthz');
  if (healthz.status !== 200) throw new Error(`serve in ${rootfs}: /healthz answered ${healthz.status}`);
  return { child, ports, ms: performance.now() - start };
}

// SIGINT: serve stops at once. On SIGTERM it would keep answering until the app (still up here) is gone.
async function stop(child) {
  const exit = once(child, 'exit');
  child.kill('SIGINT');
  const [code] = await exit;
  if (code !== 0) throw new Error(`serve exited ${code} on SIGINT`);
}

const { app, ports: appPorts } = await startApp();
const plainTable = { liveness: { app: { httpGet: { port: appPorts.http, path: '/' } } } };
const grpcTable = { ...plainTable, startup: { app: { grpc: { port: appPorts.grpc } } } };
const samples = Object.fromEntries(images.map((i) => [i.label, { plain: [], grpc: [], grpcProbe: [] }]));
try {
  for (let round = 0; round <= starts; round++) {
    // Round 0 warms the page cache with both images' files and is thrown away.
    const order = round % 2 === 0 ? images : [...images].reverse();
    for (const { label, rootfs } of order) {
      const plain = await startServe(rootfs, plainTable);
      await stop(plain.child);
      const withGrpc = await startServe(rootfs, grpcTable);
      const probes = [];
      for (let i = 0; i < PROBES; i++) {
        const probe = await httpProbe(withGrpc.ports.startup, '/osm-startup-probe/app');
        if (probe.status !== 200) throw new Error(`${label}: the gRPC probe answered ${probe.status}`);
        probes.push(probe.ms);
      }
      await stop(withGrpc.child);
      if (round === 0) continue;
      samples[label].plain.push(plain.ms);
      samples[label].grpc.push(withGrpc.ms);
      samples[label].grpcProbe.push(summary(probes).median);
    }
  }
} finally {
  app.kill('SIGTERM');
}
const result = Object.fromEntries(
  Object.entries(samples).map(([label, s]) => [
    label,
    Object.fromEntries(Object.entries(s).map(([name, values]) => [name, summary(values)])),
  ]),
);
console.log(JSON.stringify(result));
