// Stop order, end to end: kubelet sends SIGTERM to the app and the companion at once and keeps probing readiness
// while the app stops. A real app process that takes longer to stop than the companion's 4 s drain, the built
// companion in front of it (with a probe table, or as osm-edge's healthcheck container), and a kubelet-like client
// probing the companion every 200 ms through the shutdown.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';
import { type Bundle, bundle } from './bundle.js';

const EPHEMERAL = { OSM_HEALTHCHECK_PORTS: '0,0,0,0', OSM_HEALTHCHECK_HOST: '127.0.0.1' };
const PERIOD_MS = 200;
/** How long the app keeps working after SIGTERM: longer than the companion's drain (4 s). */
const APP_STOP_MS = 6_000;

interface Probe {
  path: string;
  /** When it was sent, in performance.now() time. */
  at: number;
  /** `<status> <body>` as kubelet would read it, or the connection error. */
  outcome: string;
}

/** One kubelet probe: a fresh connection, a 1 s timeout, the probe's own headers. */
function probe(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { agent: false, timeout: 1000, headers: { 'user-agent': 'kube-probe/1.30', ...headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve(`${res.statusCode} ${body.trim()}`));
        res.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
    req.end();
  });
}

/** Probes every path each period, as kubelet does, until stopped; resolves with every probe's outcome. */
function kubelet(
  urls: readonly string[],
  headers: Record<string, string> = {},
): { stop(): Promise<Probe[]> } {
  const probes: Promise<Probe>[] = [];
  const tick = () => {
    for (const url of urls) {
      const at = performance.now();
      probes.push(probe(url, headers).then((outcome) => ({ path: new URL(url).pathname, at, outcome })));
    }
  };
  tick();
  const timer = setInterval(tick, PERIOD_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      return Promise.all(probes);
    },
  };
}

interface App {
  child: ChildProcess;
  port: number;
  /** Resolves with performance.now() when the app prints `line`. */
  when(line: string): Promise<number>;
}

async function startApp(program: string): Promise<App> {
  const child = spawn(process.execPath, [program], { stdio: ['pipe', 'pipe', 'inherit'] });
  const seen = new Map<string, number>();
  const waiters = new Map<string, (at: number) => void>();
  let onPort: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => {
    onPort = resolve;
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    const at = performance.now();
    if (line.startsWith('listening ')) onPort(Number(line.slice('listening '.length)));
    seen.set(line, at);
    waiters.get(line)?.(at);
  });
  return {
    child,
    port: await port,
    when: (line) =>
      new Promise((resolve) => {
        const at = seen.get(line);
        if (at !== undefined) resolve(at);
        else waiters.set(line, resolve);
      }),
  };
}

function logLine(output: string, msg: string): Record<string, unknown> | undefined {
  for (const text of output.split('\n')) {
    if (!text.startsWith('{')) continue;
    const line = JSON.parse(text) as Record<string, unknown>;
    if (line.msg === msg) return line;
  }
  return undefined;
}

describe('stop order: the companion outlives the app it probes', () => {
  let program: Bundle;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    program = await bundle(new URL('./slow-stop-app.ts', import.meta.url));
  });
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    program?.remove();
  });

  async function pod(args: string[] = []) {
    const app = await startApp(program.path);
    children.push(app.child);
    const table = { readiness: { app: { httpGet: { port: app.port, path: '/ready' } } } };
    const companion = await startCli(
      ['serve', ...args],
      { ...EPHEMERAL, OSM_HEALTHCHECK_PROBES: JSON.stringify(table) },
      (l) => l.msg === 'serving',
    );
    children.push(companion.child);
    const ports = companion.line.ports as Record<string, number>;
    const exited = once(companion.child, 'exit').then(([code]) => ({ code, at: performance.now() }));
    const probing = kubelet([
      `http://127.0.0.1:${ports.readiness}/osm-readiness-probe/app`,
      `http://127.0.0.1:${ports.healthcheck}/healthz`,
    ]);
    return { app, companion, exited, probing };
  }

  it("keeps answering with the app's own verdict while the app stops, then exits soon after it is gone", async () => {
    const { app, companion, exited, probing } = await pod();
    // Kubelet: SIGTERM to every container of the pod at once.
    const term = performance.now();
    app.child.kill('SIGTERM');
    companion.child.kill('SIGTERM');
    const stopping = await app.when('stopping');
    // The app's remaining work: longer than the companion's drain.
    await new Promise((resolve) => setTimeout(resolve, APP_STOP_MS));
    const close = performance.now();
    app.child.stdin?.write('close\n');
    const { code, at: companionExit } = await exited;
    const probes = await probing.stop();
    const output = companion.output();

    expect(code, output).toBe(0);
    // Until the app closed, every probe got the companion's answer about the app, never a refusal.
    const whileUp = probes.filter((p) => p.at < close);
    const readiness = whileUp.filter((p) => p.path !== '/healthz');
    for (const p of readiness) {
      expect(p.outcome).toMatch(/^(200|503) readiness app: GET http:\/\/127\.0\.0\.1:\d+\/ready /);
    }
    for (const p of whileUp.filter((p) => p.path === '/healthz')) expect(p.outcome).toMatch(/^200 /);
    // While it stopped: the app's own 503, passed on (the last one may have met the port closing).
    const meanwhile = readiness.filter((p) => p.at > stopping);
    for (const p of meanwhile) expect(p.outcome).toMatch(/^503 /);
    expect(meanwhile.filter((p) => / -> 503 in \d+ ms$/.test(p.outcome)).length).toBeGreaterThanOrEqual(
      APP_STOP_MS / PERIOD_MS - 5,
    );
    // It outlived its own drain, and went soon after the app: one poll, a drain with nothing in flight, exit.
    expect(companionExit - term).toBeGreaterThan(APP_STOP_MS);
    // Under the 4 s a drain may take: with nothing in flight it ends at once (and nowhere near the 30 s grace).
    expect(companionExit - close).toBeLessThan(4_000);
    expect(logLine(output, 'waiting for the app to stop before draining')).toMatchObject({
      signal: 'SIGTERM',
      target: '127.0.0.1',
      appPorts: [app.port],
      graceSeconds: 30,
    });
    expect(logLine(output, 'stopped waiting for the app')).toMatchObject({ reason: 'app gone' });
  }, 30_000);

  it('exits after the grace and a drain when the app never stops', async () => {
    const { app, companion, exited, probing } = await pod(['--shutdown-grace', '2']);
    const term = performance.now();
    app.child.kill('SIGTERM');
    companion.child.kill('SIGTERM');
    await app.when('stopping');
    const { code, at } = await exited;
    const probes = await probing.stop();
    const output = companion.output();

    expect(code, output).toBe(0);
    expect(at - term).toBeGreaterThanOrEqual(2_000);
    expect(at - term).toBeLessThan(2_000 + 4_000 + BUSY_MACHINE_SLACK_MS);
    // Its listeners stay open for the whole grace, from SIGTERM on: a second of margin for a busy machine.
    for (const p of probes.filter((p) => p.at < term + 1_000 && p.path !== '/healthz')) {
      expect(p.outcome).toMatch(/^(200|503) readiness app: GET .* -> (200|503) in \d+ ms$/);
    }
    expect(logLine(output, 'stopped waiting for the app')).toMatchObject({ reason: 'grace over' });
    app.child.kill('SIGKILL');
  }, 30_000);
  it("as osm-edge's healthcheck container, answers the ports it was asked about until they close, never refused", async () => {
    const app = await startApp(program.path);
    children.push(app.child);
    // What osm-edge's injector writes: no table, /osm-healthcheck on 15904 with the app's port in a header.
    const companion = await startCli(
      ['serve', '--osm-edge-compat', '--verbosity', 'info'],
      EPHEMERAL,
      (l) => l.msg === 'serving /osm-healthcheck only (osm-edge compat)',
    );
    children.push(companion.child);
    const ports = companion.line.ports as Record<string, number>;
    const exited = once(companion.child, 'exit').then(([code]) => ({ code, at: performance.now() }));
    const url = `http://127.0.0.1:${ports.healthcheck}/osm-healthcheck`;
    const headers = { 'Original-Tcp-Port': String(app.port) };
    expect(await probe(url, headers)).toMatch(/^200 healthcheck: tcp 127\.0\.0\.1:\d+ connected/);
    const probing = kubelet([url], headers);
    const term = performance.now();
    app.child.kill('SIGTERM');
    companion.child.kill('SIGTERM');
    await app.when('stopping');
    // The app drains for longer than the companion's own drain, still accepting.
    await new Promise((resolve) => setTimeout(resolve, APP_STOP_MS));
    const close = performance.now();
    app.child.stdin?.write('close\n');
    const { code, at: companionExit } = await exited;
    const probes = await probing.stop();
    const output = companion.output();

    expect(code, output).toBe(0);
    // Through the app's drain every probe was answered, and answered as theirs would: the port still connects.
    const whileUp = probes.filter((p) => p.at < close);
    expect(whileUp.length).toBeGreaterThanOrEqual(APP_STOP_MS / PERIOD_MS - 5);
    for (const p of whileUp) expect(p.outcome).toMatch(/^200 healthcheck: tcp 127\.0\.0\.1:\d+ connected/);
    expect(companionExit - term).toBeGreaterThan(APP_STOP_MS);
    // Under the 4 s a drain may take: with nothing in flight it ends at once (and nowhere near the 30 s grace).
    expect(companionExit - close).toBeLessThan(4_000);
    expect(logLine(output, 'waiting for the app to stop before draining')).toMatchObject({
      signal: 'SIGTERM',
      appPorts: [app.port],
      graceSeconds: 30,
    });
    expect(logLine(output, 'stopped waiting for the app')).toMatchObject({ reason: 'app gone' });
  }, 30_000);
});
