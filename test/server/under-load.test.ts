// lane: isolated — for two minutes it loads the machine with thousands of connections and floods; beside other suites
// its 1 s probes would judge the machine, not the companion.
//
// No lever through the door (docs/security.md#under-load): the built companion, a caller in another process
// (bench/attacker.mjs, from another loopback address, 127.0.0.2) loading one of its ports in each shape an attacker
// in another pod would, and beside it a kubelet-like prober (kubelet's own HTTP rules, test/e2e/kubelet-http.ts: a
// new connection per probe, period 1 s, timeout 1 s) running the pod's liveness and readiness probes. With inject's
// table and without one (the osm-edge drop-in): kubelet never sees 3 liveness failures in a row nor more than 1
// readiness failure in 10, a flood of valid requests reaches the app at about ten checks a second per probe, the
// companion stays up inside its memory limit, and the attack shows in /metrics.
// In a cluster the companion has its pod's CPU share and kubelet the node's, whatever the attacker's pod does; on
// this machine, busy with other suites, that is played with priorities: as root the companion and this process
// (kubelet's prober, the app) run at nice -10, else the attacker at nice 10.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { setPriority } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { longestRun } from '../../bench/attack.mjs';
import { COMPANION_RESOURCES } from '../../src/rewrite/resources/defaults.js';
import { kubeletHttpProbe } from '../e2e/kubelet-http.js';
import { httpApp, type Running } from '../helpers/apps.js';
import { ROOT, type ServePorts, startServe } from '../helpers/cli.js';
import { get } from '../helpers/client.js';

const SECONDS = 10;
const PERIOD_MS = 1000;
const TIMEOUT_MS = 1000;
const ATTACKER = '127.0.0.2';
const AS_ROOT = process.getuid?.() === 0;

type Role = keyof ServePorts;
type Mode = 'table' | 'no table';

/** A kubelet probe as the prober sends it to the companion: port, path and headers. */
interface KubeletRequest {
  role: Role;
  path: string;
  headers: Record<string, string>;
}

interface Shape {
  name: string;
  attack: 'held-headers' | 'idle-keepalive' | 'valid-flood' | 'refused-flood' | 'malformed-flood';
  role: Role;
  /** The request a flood sends: kubelet's own for that port, by default. */
  flood?: 'kubelet' | 'distinct';
  /** What /metrics must show of it: a series whose count grew, per mode. */
  shows: string | ((mode: Mode) => string);
  /** The app's checks a second, at most, when the shape is a flood of valid requests. */
  maxChecksPerSecond?: number;
}

// Two probes (liveness and readiness, as in the pod): each about 10 checks a second at most under a flood,
// kubelet's 1 a second otherwise; 1 more each for a check begun at the window's edges.
const FLOODED_ONE = 10 + 1 + 2;

const SHAPES: Shape[] = [
  {
    name: 'held connections (a request line and one header, then a byte a second)',
    attack: 'held-headers',
    role: 'liveness',
    shows: 'osm_healthcheck_connections_cut_total{listener="liveness",reason="rate"}',
  },
  {
    name: 'idle keep-alives (one valid request each, then silence)',
    attack: 'idle-keepalive',
    role: 'liveness',
    shows: 'osm_healthcheck_shared_answers_total{listener="liveness"}',
  },
  {
    name: "a flood of kubelet's own liveness request (256 connections)",
    attack: 'valid-flood',
    role: 'liveness',
    shows: 'osm_healthcheck_shared_answers_total{listener="liveness"}',
    maxChecksPerSecond: FLOODED_ONE,
  },
  {
    name: 'a flood of the readiness port',
    attack: 'valid-flood',
    role: 'readiness',
    shows: 'osm_healthcheck_shared_answers_total{listener="readiness"}',
    maxChecksPerSecond: FLOODED_ONE,
  },
  {
    name: 'a flood of refused header probes',
    attack: 'refused-flood',
    role: 'liveness',
    // Without a table a port is refused only by --allowed-ports: there the connect to port 1 is run, and refused.
    shows: (mode) =>
      `osm_healthcheck_header_checks_total{outcome="${mode === 'table' ? 'port_not_allowed' : 'tcp'}"}`,
  },
  {
    name: 'a flood of bytes that are not HTTP',
    attack: 'malformed-flood',
    role: 'liveness',
    shows: 'osm_healthcheck_connections_cut_total{listener="liveness",reason="malformed"}',
  },
];

/** Without a table callers name any path: a flood of distinct ones fills the in-flight gate with distinct checks. */
const DISTINCT: Shape = {
  name: 'a flood of distinct paths (a check each)',
  attack: 'valid-flood',
  role: 'liveness',
  flood: 'distinct',
  shows: 'osm_healthcheck_connections_cut_total{listener="liveness",reason="rate"}',
};

function kubeletRequests(mode: Mode, appPort: number): KubeletRequest[] {
  if (mode === 'table') {
    return [
      { role: 'liveness', path: '/osm-liveness-probe/app', headers: {} },
      { role: 'readiness', path: '/osm-readiness-probe/app', headers: {} },
    ];
  }
  // osm-edge's injector's form: the original probe in Original-* headers, liveness HTTP and readiness TCP.
  return [
    {
      role: 'liveness',
      path: '/osm-healthcheck',
      headers: { 'Original-Http-Port': String(appPort), 'Original-Http-Path': '/healthz' },
    },
    { role: 'readiness', path: '/osm-healthcheck', headers: { 'Original-Tcp-Port': String(appPort) } },
  ];
}

/** kubelet's prober for `seconds`: every period (at once when late, as Go's ticker), a new connection, one timeout. */
async function probeFor(
  ports: ServePorts,
  request: KubeletRequest,
  seconds: number,
  timing = { periodMs: PERIOD_MS, timeoutMs: TIMEOUT_MS },
) {
  const results: { ok: boolean; ms: number; output: string }[] = [];
  const until = performance.now() + seconds * 1000;
  let next = performance.now();
  while (performance.now() < until) {
    const started = performance.now();
    const { result, output } = await kubeletHttpProbe(
      '127.0.0.1',
      {
        scheme: 'HTTP',
        port: ports[request.role],
        path: request.path,
        headers: Object.entries(request.headers).map(([name, value]) => ({ name, value })),
      },
      timing.timeoutMs,
    );
    results.push({
      ok: result !== 'failure',
      ms: performance.now() - started,
      output: output.toString('utf8').slice(0, 120),
    });
    next += timing.periodMs;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else next = performance.now();
  }
  return results;
}

/** `name{labels}` -> value for the companion's own series. */
async function scrape(ports: ServePorts): Promise<Map<string, number>> {
  const answer = await get(`http://127.0.0.1:${ports.healthcheck}/metrics`);
  expect(answer.status).toBe(200);
  const found = new Map<string, number>();
  for (const line of answer.body.split('\n')) {
    if (!line.startsWith('osm_healthcheck_')) continue;
    const cut = line.lastIndexOf(' ');
    found.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return found;
}

function attacker(shape: Shape, ports: ServePorts, requests: KubeletRequest[], seconds = SECONDS + 1) {
  const kubelet = requests.find((r) => r.role === shape.role) ?? requests[0];
  const options = {
    from: ATTACKER,
    path: kubelet?.path,
    headers: kubelet?.headers,
    distinctPaths: shape.flood === 'distinct',
    // Past the 1,024 a port holds, as on the real node (3,000); a smaller flood when it is not a held shape.
    ...(shape.attack === 'held-headers' || shape.attack === 'idle-keepalive' ? { connections: 3000 } : {}),
  };
  const child = spawn(
    process.execPath,
    [
      `${ROOT}bench/attacker.mjs`,
      shape.attack,
      String(ports[shape.role]),
      String(seconds),
      JSON.stringify(options),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  // Absolute, not inherited from this process (at -10 as root): a pod of its own beside the companion's.
  setPriority(child.pid as number, AS_ROOT ? 0 : 10);
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const done = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`attacker exited ${code}: ${out}`)),
    );
  });
  return { done, kill: () => child.kill('SIGKILL') };
}

/** Peak resident memory of a process, from the kernel. */
function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
  return kb / 1024;
}

const MEMORY_LIMIT_MIB = Number.parseInt(COMPANION_RESOURCES.limits.memory, 10);

describe.each<Mode>(['table', 'no table'])("kubelet's probes under another caller's load (%s)", (mode) => {
  let app: Running<Server>;
  /** Connections the app accepted: one per check of it (HTTP or TCP). */
  let checks = 0;

  beforeAll(async () => {
    if (AS_ROOT) setPriority(-10);
    app = await httpApp((req, res) => res.writeHead(req.url === '/healthz' ? 200 : 404).end('ok'));
    app.server.on('connection', () => {
      checks++;
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const shapes = mode === 'table' ? SHAPES : [...SHAPES, DISTINCT];
  it.each(shapes)(
    '$name: no 3 liveness failures in a row, at most 1 readiness failure in 10',
    async (shape) => {
      const table = {
        liveness: { app: { httpGet: { port: app.port, path: '/healthz' } } },
        readiness: { app: { httpGet: { port: app.port, path: '/healthz' } } },
      };
      const companion = await startServe(mode === 'table' ? table : undefined);
      const { ports } = companion;
      if (AS_ROOT) setPriority(companion.child.pid as number, -10);
      const requests = kubeletRequests(mode, app.port);
      const attack = attacker(shape, ports, requests);
      try {
        const before = await scrape(ports);
        // The attack's first second in full swing before kubelet's first probe.
        await new Promise((resolve) => setTimeout(resolve, 500));
        const checksBefore = checks;
        const startedAt = performance.now();
        const [liveness, readiness] = await Promise.all(
          requests.map((request) => probeFor(ports, request, SECONDS - 1)),
        );
        const perSecond = (checks - checksBefore) / ((performance.now() - startedAt) / 1000);
        const attacked = await attack.done;
        const after = await scrape(ports);
        const peak = peakRssMiB(companion.child.pid as number);
        const summary = {
          mode,
          shape: shape.name,
          liveness: liveness?.map((r) => (r.ok ? Math.round(r.ms) : `FAIL ${r.output}`)),
          readiness: readiness?.map((r) => (r.ok ? Math.round(r.ms) : `FAIL ${r.output}`)),
          appChecksPerSecond: Math.round(perSecond * 10) / 10,
          peakRssMiB: Math.round(peak),
          attacker: attacked,
        };
        console.log(JSON.stringify(summary));

        expect(longestRun(liveness ?? []), JSON.stringify(summary)).toBeLessThan(3);
        const readinessFailures = (readiness ?? []).filter((r) => !r.ok).length;
        expect(readinessFailures, JSON.stringify(summary)).toBeLessThanOrEqual(
          Math.max(1, Math.floor((readiness?.length ?? 0) / 10)),
        );
        expect(liveness?.length).toBeGreaterThanOrEqual(SECONDS - 2);
        if (shape.maxChecksPerSecond !== undefined) {
          expect(perSecond, JSON.stringify(summary)).toBeLessThanOrEqual(shape.maxChecksPerSecond);
        }
        // The attack happened, and shows.
        expect(Number(attacked.opened)).toBeGreaterThan(100);
        const shows = typeof shape.shows === 'string' ? shape.shows : shape.shows(mode);
        expect(after.get(shows) ?? 0, shows).toBeGreaterThan(before.get(shows) ?? 0);
        expect((await get(`http://127.0.0.1:${ports.healthcheck}/healthz`)).status).toBe(200);
        expect(peak).toBeLessThan(MEMORY_LIMIT_MIB);
      } finally {
        attack.kill();
        await companion.stop();
      }
    },
    (SECONDS + 20) * 1000,
  );
});

// The lever a flood had on a slow probe (docs/security.md#under-load): a flood keeps one check of the probe running
// at all times, so kubelet's request, arriving more than the 100 ms window into that check, waited for its end and
// the whole next one, past kubelet's timeout for some of its probes (without the deadline in shared-checks.ts, 4 of
// 15 here, and 3 and 4 of 19 at a 1 s timeout, each alone: no 3 in a row, which is why this case holds liveness to
// the readiness rule too, at most 1 failure in 10; a readiness probe with failureThreshold 1 fails on one, and the
// one allowed is this busy machine's: an app's answer late by hundreds of milliseconds). The app answers the probe
// in 60% of its timeout; the timeout is 2 s and kubelet's period 2 s, so that the machine's own delays are not read
// as the flood's. The flood is kubelet's own liveness request from another address with the caller rate as deployed
// (on, 50 new connections a second): the lever needs only a request every few hundred milliseconds, so the rate does
// not close it, and a case that needed the rate off would not be an attack a pod can make.
describe('a slow probe under a flood of its own request (table)', () => {
  const SLOW_SECONDS = 30;
  const SLOW_TIMEOUT_S = 2;
  const SLOW_PERIOD_MS = 2000;
  const SLOW_MS = 0.6 * SLOW_TIMEOUT_S * 1000;
  let app: Running<Server>;
  /** Connections the app accepted (one per check), checks it holds now, and the most it held at once. */
  let checks = 0;
  let inFlight = 0;
  let mostInFlight = 0;

  beforeAll(async () => {
    if (AS_ROOT) setPriority(-10);
    app = await httpApp((req, res) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(req.url === '/healthz' ? 200 : 404).end('ok');
      }, SLOW_MS);
    });
    app.server.on('connection', () => {
      checks++;
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it(
    "kubelet's probe fails no more than the machine's noise, the app sees one check at a time, and the answers given at a deadline show",
    async () => {
      const table = {
        liveness: { app: { httpGet: { port: app.port, path: '/healthz' }, timeoutSeconds: SLOW_TIMEOUT_S } },
      };
      const companion = await startServe(table);
      const { ports } = companion;
      if (AS_ROOT) setPriority(companion.child.pid as number, -10);
      const request: KubeletRequest = { role: 'liveness', path: '/osm-liveness-probe/app', headers: {} };
      // What the flood shows in /metrics is asserted below, with the other numbers.
      const flood: Shape = { name: 'slow', attack: 'valid-flood', role: 'liveness', shows: '' };
      const attack = attacker(flood, ports, [request], SLOW_SECONDS + 1);
      const atDeadline = 'osm_healthcheck_deadline_answers_total{listener="liveness"}';
      try {
        const before = await scrape(ports);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const checksBefore = checks;
        const startedAt = performance.now();
        const liveness = await probeFor(ports, request, SLOW_SECONDS - 1, {
          periodMs: SLOW_PERIOD_MS,
          timeoutMs: SLOW_TIMEOUT_S * 1000,
        });
        const perSecond = (checks - checksBefore) / ((performance.now() - startedAt) / 1000);
        const attacked = await attack.done;
        const after = await scrape(ports);
        const summary = {
          liveness: liveness.map((r) => (r.ok ? Math.round(r.ms) : `FAIL ${Math.round(r.ms)} ${r.output}`)),
          appChecksPerSecond: Math.round(perSecond * 10) / 10,
          mostInFlight,
          deadlineAnswers: (after.get(atDeadline) ?? 0) - (before.get(atDeadline) ?? 0),
          attacker: attacked,
        };
        console.log(JSON.stringify(summary));
        expect(liveness.length).toBeGreaterThanOrEqual((SLOW_SECONDS * 1000) / SLOW_PERIOD_MS - 2);
        expect(longestRun(liveness), JSON.stringify(summary)).toBeLessThan(3);
        expect(liveness.filter((r) => !r.ok).length, JSON.stringify(summary)).toBeLessThanOrEqual(
          Math.max(1, Math.floor(liveness.length / 10)),
        );
        // One check at a time: never two at the app, so at most one per SLOW_MS, and one more at the window's edge.
        expect(mostInFlight, JSON.stringify(summary)).toBe(1);
        expect(perSecond, JSON.stringify(summary)).toBeLessThanOrEqual(1000 / SLOW_MS + 1);
        expect(Number(attacked.opened)).toBeGreaterThan(100);
        expect(summary.deadlineAnswers, atDeadline).toBeGreaterThan(0);
      } finally {
        attack.kill();
        await companion.stop();
      }
    },
    (SLOW_SECONDS + 20) * 1000,
  );
});
