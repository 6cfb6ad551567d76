// prom-client costs start-up and memory in every pod, so the built serve must not carry it in its main bundle nor
// load it before the first GET /metrics; then it loads it once, from dist/commands/serve-metrics.cjs, and a scrape
// that cannot load it answers 500 in one line and the next one tries again.

import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, startCli } from '../helpers/cli.js';
import { get } from '../helpers/client.js';

const EPHEMERAL = { OSM_HEALTHCHECK_PORTS: '0,0,0,0', OSM_HEALTHCHECK_HOST: '127.0.0.1' };
const TABLE = JSON.stringify({ readiness: { app: { tcpSocket: { port: 1 } } } });
const SERVE = `${ROOT}dist/commands/serve.script.js`;
const METRICS = `${ROOT}dist/commands/serve-metrics.cjs`;

// Strings only prom-client's code or the exposition's (registry.ts) holds: minifying keeps string literals.
const EXPOSITION_ONLY = [
  'process_cpu_user_seconds_total',
  'nodejs_eventloop_lag_seconds',
  'probe_duration_seconds',
  'Checks refused at once',
];

// Reports, on SIGUSR2, which files node's CommonJS loader holds (serve's own bundle runs through a vm.Script).
const REPORT = `import { createRequire } from 'node:module';
const cache = createRequire('/').cache;
process.on('SIGUSR2', () => process.stderr.write('required ' + JSON.stringify(Object.keys(cache)) + '\\n'));`;

let children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  }
  children = [];
});

async function serve(cli?: string) {
  const started = await startCli(
    ['serve'],
    {
      ...EPHEMERAL,
      OSM_HEALTHCHECK_PROBES: TABLE,
      NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(REPORT)}`,
    },
    (line) => line.msg === 'serving',
    cli,
  );
  children.push(started.child);
  const ports = started.line.ports as Record<string, number>;
  return { ...started, metrics: () => get(`http://127.0.0.1:${ports.healthcheck}/metrics`) };
}

async function required(child: ChildProcess, output: () => string): Promise<string[]> {
  const seen = output()
    .split('\n')
    .filter((l) => l.startsWith('required ')).length;
  child.kill('SIGUSR2');
  let lines: string[] = [];
  await expect
    .poll(() => {
      lines = output()
        .split('\n')
        .filter((l) => l.startsWith('required '));
      return lines.length;
    })
    .toBe(seen + 1);
  return JSON.parse((lines.at(-1) ?? '').slice('required '.length));
}

describe("serve's metrics, loaded on the first scrape", () => {
  it.each(EXPOSITION_ONLY)('leaves %s out of serve’s main bundle, in serve-metrics.cjs', (text) => {
    expect(readFileSync(SERVE, 'utf8').includes(text)).toBe(false);
    expect(readFileSync(METRICS, 'utf8').includes(text)).toBe(true);
  });

  it('requires serve-metrics.cjs only on the first scrape, once for many scrapes at once', async () => {
    const { child, output, metrics } = await serve();
    expect(await required(child, output)).not.toContain(METRICS);
    const scrapes = await Promise.all(Array.from({ length: 5 }, () => metrics()));
    for (const scrape of scrapes) {
      expect(scrape.status).toBe(200);
      expect(scrape.body).toContain('osm_healthcheck_probes_total{kind="readiness",container="app"');
    }
    expect(await required(child, output)).toContain(METRICS);
  });

  it('answers 500 in one line while the metrics file cannot be loaded, and loads it on a later scrape', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'osm-hc-metrics-'));
    try {
      cpSync(`${ROOT}dist`, join(dir, 'dist'), { recursive: true });
      const file = join(dir, 'dist/commands/serve-metrics.cjs');
      renameSync(file, `${file}.away`);
      const { metrics, output } = await serve(join(dir, 'dist/cli.mjs'));
      const failed = await metrics();
      expect(failed.status).toBe(500);
      expect(failed.body).toMatch(/^metrics: Cannot find module '.*serve-metrics\.cjs'\n$/);
      // The log line comes on the child's stdout, the answer on a socket: either may arrive first.
      await expect.poll(output).toContain('"msg":"metrics failed"');
      renameSync(`${file}.away`, file);
      const later = await metrics();
      expect(later.status).toBe(200);
      expect(later.body).toContain('osm_healthcheck_build_info');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
