// No lever through the door, measured (docs/security.md#under-load): each attack shape of bench/attacker.mjs played
// against the built companion while a kubelet-like prober (a new connection per probe, period 1 s, timeout 1 s)
// runs the pod's liveness and readiness probes, both of `/healthz` on the app, with inject's table and without one
// (the osm-edge drop-in: the probes in Original-* headers). Each run is judged against the unloaded run of the same
// mode in the same bench: kubelet's failures (and the longest run of them) and p99, the app's checks a second,
// and the companion's peak RSS. The companion runs on the server core, the attacker on the client core with the
// prober and the app (this process), where the machine has two.
//   npm run bench -- --attack     (BENCH_ATTACK_SECONDS per run, default 20)

import { createServer } from 'node:http';
import { httpProbe } from './clients.mjs';
import { CLI } from './contenders.mjs';
import { CLIENT_CORE, freePorts, memory, SERVER_CORE, spawnNode, stop, waitAnswering } from './procs.mjs';
import { percentile } from './stats.mjs';

const PERIOD_MS = 1000;
const TIMEOUT_MS = 1000;

/** The shapes, in the order of the issue; `none` is the unloaded run each is judged against. */
export const ATTACKS = [
  { name: 'none' },
  { name: 'held connections (3000, a header byte a second)', shape: 'held-headers', role: 'liveness' },
  { name: 'idle keep-alives (3000)', shape: 'idle-keepalive', role: 'liveness' },
  { name: 'flood of kubelet’s liveness request (256 conns)', shape: 'valid-flood', role: 'liveness' },
  { name: 'flood of the readiness port (256 conns)', shape: 'valid-flood', role: 'readiness' },
  { name: 'flood of refused header probes', shape: 'refused-flood', role: 'liveness' },
  { name: 'flood of bytes that are not HTTP', shape: 'malformed-flood', role: 'liveness' },
  { name: 'flood of distinct paths (no table only)', shape: 'valid-flood', role: 'liveness', distinct: true },
];

export function attackPlan(env) {
  const seconds = Number(env.BENCH_ATTACK_SECONDS ?? 20);
  if (!(seconds >= 2))
    throw new Error(`BENCH_ATTACK_SECONDS must be a number >= 2, got ${env.BENCH_ATTACK_SECONDS}`);
  return { seconds };
}

/** The app: 200 on /healthz, 404 elsewhere; counts every request (each is one check the companion made). */
async function countingApp() {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    res.writeHead(req.url === '/healthz' ? 200 : 404).end('ok\n');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, requests: () => requests, close: () => server.close() };
}

function kubeletRequests(mode, appPort) {
  if (mode === 'table') {
    return {
      liveness: { role: 'liveness', path: '/osm-liveness-probe/app', headers: {} },
      readiness: { role: 'readiness', path: '/osm-readiness-probe/app', headers: {} },
    };
  }
  return {
    liveness: {
      role: 'liveness',
      path: '/osm-healthcheck',
      headers: { 'Original-Http-Port': String(appPort), 'Original-Http-Path': '/healthz' },
    },
    readiness: {
      role: 'readiness',
      path: '/osm-healthcheck',
      headers: { 'Original-Http-Port': String(appPort), 'Original-Http-Path': '/healthz' },
    },
  };
}

/** kubelet's prober for `seconds`: every period (at once when late, as Go's ticker), one timeout. */
async function probeFor(port, request, seconds) {
  const results = [];
  const until = performance.now() + seconds * 1000;
  let next = performance.now();
  while (performance.now() < until) {
    results.push(await httpProbe(port, request.path, request.headers, TIMEOUT_MS));
    next += PERIOD_MS;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else next = performance.now();
  }
  return results;
}

/** The longest run of failures in a row: kubelet restarts at failureThreshold (3 by default) of them. */
export function longestRun(results) {
  let longest = 0;
  let run = 0;
  for (const r of results) {
    run = r.ok ? 0 : run + 1;
    longest = Math.max(longest, run);
  }
  return longest;
}

async function oneRun(mode, attack, app, seconds) {
  const ports = await freePorts(4);
  const roles = { liveness: ports[0], readiness: ports[1], startup: ports[2], healthcheck: ports[3] };
  const table = {
    liveness: { app: { httpGet: { port: app.port, path: '/healthz' } } },
    readiness: { app: { httpGet: { port: app.port, path: '/healthz' } } },
  };
  const companion = spawnNode(
    SERVER_CORE,
    [CLI, 'serve', '--ports', ports.join(','), '--host', '127.0.0.1'],
    mode === 'table' ? { OSM_HEALTHCHECK_PROBES: JSON.stringify(table) } : {},
  );
  await waitAnswering([roles.healthcheck], companion);
  const requests = kubeletRequests(mode, app.port);
  let attacker;
  if (attack.shape !== undefined) {
    const kubelet = requests[attack.role];
    const options = {
      from: '127.0.0.2',
      path: kubelet.path,
      headers: kubelet.headers,
      distinctPaths: attack.distinct === true,
    };
    attacker = spawnNode(CLIENT_CORE, [
      'bench/attacker.mjs',
      attack.shape,
      String(roles[attack.role]),
      String(seconds + 1),
      JSON.stringify(options),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const checksBefore = app.requests();
  const started = performance.now();
  const [liveness, readiness] = await Promise.all(
    [requests.liveness, requests.readiness].map((r) => probeFor(roles[r.role], r, seconds)),
  );
  const checksPerSecond = (app.requests() - checksBefore) / ((performance.now() - started) / 1000);
  const peakRssMiB = memory(companion.pid).hwm;
  const up = await httpProbe(roles.healthcheck, '/healthz', {}, 2000);
  if (attacker !== undefined) await stop(attacker);
  await stop(companion);
  const latencies = [...liveness, ...readiness].map((r) => r.ms);
  return {
    liveness: {
      failures: liveness.filter((r) => !r.ok).length,
      probes: liveness.length,
      longest: longestRun(liveness),
    },
    readiness: { failures: readiness.filter((r) => !r.ok).length, probes: readiness.length },
    p99Ms: percentile(latencies, 0.99),
    checksPerSecond,
    peakRssMiB,
    stayedUp: up.ok,
  };
}

/** Every shape in both modes, each against its mode's unloaded run. */
export async function runAttack({ seconds }, say = () => {}) {
  const app = await countingApp();
  const results = {};
  try {
    for (const mode of ['table', 'no table']) {
      results[mode] = [];
      for (const attack of ATTACKS) {
        if (attack.distinct && mode === 'table') continue;
        say(`attack: ${mode}: ${attack.name} (${seconds} s)`);
        results[mode].push({ attack: attack.name, ...(await oneRun(mode, attack, app, seconds)) });
      }
    }
  } finally {
    app.close();
  }
  return { seconds, results };
}

const ratio = (value, base) => (base > 0 ? `${(value / base).toFixed(2)}×` : '–');

export function renderAttack(run, info) {
  const lines = [
    `### Under load (no lever through the door)`,
    '',
    `${info.date}, ${info.node}, ${info.cpu}, commit ${info.commit}; companion on core ${SERVER_CORE}, attacker, prober and app on core ${CLIENT_CORE} (${info.pinned ? 'pinned' : 'not pinned: one core'}). ${run.seconds} s a run, probes every 1 s with a 1 s timeout; each row against the unloaded run (\`none\`) of its mode in the same bench.`,
    '',
  ];
  for (const [mode, rows] of Object.entries(run.results)) {
    const base = rows.find((r) => r.attack === 'none');
    lines.push(
      `**${mode === 'table' ? "With inject's table" : 'Without a table (the osm-edge drop-in)'}**`,
      '',
      '| attack | liveness failed (longest run) | readiness failed | kubelet p99 | × unloaded | app checks/s | × unloaded | peak RSS | × unloaded | up after |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.attack} | ${r.liveness.failures}/${r.liveness.probes} (${r.liveness.longest}) | ${r.readiness.failures}/${r.readiness.probes} | ${Math.round(r.p99Ms)} ms | ${ratio(r.p99Ms, base.p99Ms)} | ${r.checksPerSecond.toFixed(1)} | ${ratio(r.checksPerSecond, base.checksPerSecond)} | ${Math.round(r.peakRssMiB)} MiB | ${ratio(r.peakRssMiB, base.peakRssMiB)} | ${r.stayedUp ? 'yes' : '**no**'} |`,
      ),
      '',
    );
  }
  lines.push(`Load average before: ${info.loadBefore}; after: ${info.loadNow()}.`);
  return lines.join('\n');
}
