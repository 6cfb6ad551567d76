// `node bench/webhook-startup.mjs NAME=CLI ...`: the webhook's start-up and memory, for each built CLI given (e.g.
// before=../old/dist/cli.mjs after=dist/cli.mjs), in one run and alternating, so every build sees the same machine.
// Each round starts `webhook --port 0` with files TLS outside a cluster (no API server to wait for) and takes the
// time from spawn to its `webhook serving` line, then its RSS there (VmRSS) and at its peak (VmHWM). Prints a
// markdown table of medians (min–max) with each build's ratio to the first one, taken per round.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { formatSummary, ratioSummary, summary } from './stats.mjs';

const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? '15');
const builds = process.argv.slice(2).map((arg) => {
  const at = arg.indexOf('=');
  if (at < 1) throw new Error(`"${arg}": give NAME=path/to/dist/cli.mjs`);
  return { name: arg.slice(0, at), cli: arg.slice(at + 1) };
});
if (builds.length === 0 || !Number.isInteger(ROUNDS) || ROUNDS < 1) {
  throw new Error('usage: node bench/webhook-startup.mjs NAME=CLI [NAME=CLI ...] (BENCH_WEBHOOK_ROUNDS, 15)');
}

const dir = mkdtempSync(join(tmpdir(), 'osm-hc-webhook-startup-'));
const cert = join(dir, 'tls.crt');
const key = join(dir, 'tls.key');
const made = spawnSync('openssl', [
  ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'],
  ...['-subj', '/CN=osm-healthcheck-webhook.osm-healthcheck.svc', '-keyout', key, '-out', cert],
]);
if (made.status !== 0) throw new Error(`openssl: ${made.stderr}`);

/** kB of a /proc/PID/status field. */
const statusKb = (pid, field) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

function startOnce(cli) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [cli, 'webhook', '--port', '0', '--tls-cert', cert, '--tls-key', key],
      {
        env: {
          ...process.env,
          OSM_HEALTHCHECK_HOST: '127.0.0.1',
          OSM_HEALTHCHECK_METRICS_PORT: '0',
          KUBERNETES_SERVICE_HOST: '',
          OSM_HEALTHCHECK_KUBE_API: '',
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cli}: no "webhook serving" line within 20 s`));
    }, 20_000);
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (!text.includes('"webhook serving"')) return;
      child.stdout.removeAllListeners('data');
      const ms = performance.now() - started;
      const rss = statusKb(child.pid, 'VmRSS') / 1024;
      // A moment for what start-up left to settle (the first GC, lazy loads), then the peak so far.
      setTimeout(() => {
        const peak = statusKb(child.pid, 'VmHWM') / 1024;
        clearTimeout(timer);
        child.once('exit', () => resolve({ ms, rss, peak }));
        child.kill('SIGTERM');
      }, 300);
    });
    child.on('error', reject);
  });
}

const cell = (values, digits) => formatSummary(summary(values), digits);

try {
  const runs = new Map(builds.map((b) => [b.name, []]));
  for (const b of builds) await startOnce(b.cli); // warm the page cache: the first start of each reads from disk
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating order: neither build is always the one that starts right after the other.
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const b of order) runs.get(b.name).push(await startOnce(b.cli));
  }
  const first = runs.get(builds[0].name);
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `Node ${process.version}, ${ROUNDS} rounds, load average ${load} after; medians (min–max); ratios per round against ${builds[0].name}.\n`,
  );
  console.log(
    '| build | webhook bundle | start to serving ms | ratio | RSS at serving MiB | ratio | peak RSS MiB |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const b of builds) {
    const own = runs.get(b.name);
    const bundle = statSync(join(dirname(b.cli), 'commands', 'webhook.mjs')).size / 1e6;
    const ratio = (field) =>
      formatSummary(
        ratioSummary(
          own.map((r) => r[field]),
          first.map((r) => r[field]),
        ),
        2,
      );
    console.log(
      `| ${b.name} | ${bundle.toFixed(2)} MB | ${cell(
        own.map((r) => r.ms),
        0,
      )} | ${ratio('ms')} | ${cell(
        own.map((r) => r.rss),
        1,
      )} | ${ratio('rss')} | ${cell(
        own.map((r) => r.peak),
        1,
      )} |`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
