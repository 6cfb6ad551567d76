// A real Prometheus server (Debian's `prometheus` package; .ci/run installs it) scraping loopback targets, and
// `promtool check metrics`. Prometheus listens on 127.0.0.1 port 0 (the port is read from its log), keeps its
// data in a temp dir, and scrapes every second; stop() ends it and removes the dir.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath } from './on-path.js';
import { skipWithout, tool } from './system-tools.js';

export const PROMETHEUS_BIN = onPath('prometheus');
export const PROMTOOL_BIN = onPath('promtool');

/**
 * True when the suite must skip: the tools are absent and this is not CI. Says so loudly. In CI (CI=true) a
 * missing tool is a failure, not a skip: the suite runs and startPrometheus / promtool say what is missing.
 */
export function skipWithoutPrometheus(suite: string): boolean {
  return skipWithout(suite, [
    tool('prometheus', 'apt-get install prometheus'),
    tool('promtool', 'apt-get install prometheus'),
  ]);
}

function required(bin: string | undefined, name: string): string {
  if (bin === undefined) throw new Error(`${name} is not on PATH: apt-get install prometheus (.ci/run does)`);
  return bin;
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface Prometheus {
  /** http://127.0.0.1:<port> */
  url: string;
  /** An instant query through /api/v1/query; throws on an API error. */
  query(promql: string): Promise<Sample[]>;
  /** Each scrape target's health and last error, for failure messages. */
  targets(): Promise<Array<{ scrapeUrl: string; health: string; lastError: string }>>;
  /** Everything Prometheus logged so far. */
  log(): string;
  stop(): Promise<void>;
}

const STARTUP_MS = 15_000;

/** One scrape job: loopback targets, and for an API server its TLS and bearer token. */
export interface ScrapeJob {
  name: string;
  /** `127.0.0.1:port` */
  targets: readonly string[];
  path?: string;
  scheme?: 'http' | 'https';
  /** The CA that signed the target's certificate (https). */
  caFile?: string;
  /** A file holding the bearer token the target asks for. */
  tokenFile?: string;
  /** Target labels, as a PodMonitor gives every companion its `namespace` and `pod`. */
  labels?: Readonly<Record<string, string>>;
}

/** Starts Prometheus scraping `targets` (`127.0.0.1:port`) at `metricsPath` every second; resolves once ready. */
export function startPrometheus(targets: readonly string[], metricsPath = '/metrics'): Promise<Prometheus> {
  return startPrometheusWith({ jobs: [{ name: 'osm-healthcheck', targets, path: metricsPath }] });
}

/** Starts Prometheus with these jobs (scraped every second) and rule files (evaluated every second). */
export async function startPrometheusWith(options: {
  jobs: readonly ScrapeJob[];
  ruleFiles?: readonly string[];
}): Promise<Prometheus> {
  const bin = required(PROMETHEUS_BIN, 'prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  const job = (j: ScrapeJob) => [
    `  - job_name: ${JSON.stringify(j.name)}`,
    `    metrics_path: ${JSON.stringify(j.path ?? '/metrics')}`,
    `    scheme: ${j.scheme ?? 'http'}`,
    ...(j.caFile === undefined ? [] : ['    tls_config:', `      ca_file: ${JSON.stringify(j.caFile)}`]),
    ...(j.tokenFile === undefined
      ? []
      : ['    authorization:', `      credentials_file: ${JSON.stringify(j.tokenFile)}`]),
    '    static_configs:',
    `      - targets: ${JSON.stringify(j.targets)}`,
    ...(j.labels === undefined ? [] : [`        labels: ${JSON.stringify(j.labels)}`]),
  ];
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      '  evaluation_interval: 1s',
      ...(options.ruleFiles === undefined ? [] : [`rule_files: ${JSON.stringify(options.ruleFiles)}`]),
      'scrape_configs:',
      ...options.jobs.flatMap(job),
      '',
    ].join('\n'),
  );
  const child = spawn(
    bin,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Should the test process die first, Prometheus must not outlive it.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  let output = '';
  const stop = async () => {
    process.off('exit', kill);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(kill, 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = await ready(child, (text) => {
      output += text;
    });
    const api = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? response.status}`);
      return body.data;
    };
    return {
      url,
      query: async (promql) =>
        (await api<{ result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`)).result,
      targets: async () =>
        (
          await api<{ activeTargets: Array<{ scrapeUrl: string; health: string; lastError: string }> }>(
            '/api/v1/targets',
          )
        ).activeTargets,
      log: () => output,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Resolves with Prometheus' URL once it logs that it is ready; rejects if it exits or takes too long. */
function ready(child: ChildProcess, collect: (text: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    let address: string | undefined;
    const timer = setTimeout(() => fail(`not ready within ${STARTUP_MS} ms`), STARTUP_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`prometheus ${why}:\n${text}`));
    };
    const onData = (chunk: Buffer) => {
      collect(String(chunk));
      text += chunk;
      // 2.x logs `msg="Listening on" address=127.0.0.1:PORT`, 3.x the same fields in slog's format.
      address ??= /msg="Listening on" address=(\S+)/.exec(text)?.[1];
      if (address !== undefined && text.includes('Server is ready to receive web requests.')) {
        clearTimeout(timer);
        resolve(`http://${address}`);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', (err) => fail(`did not start: ${err.message}`));
    child.on('exit', (code, signal) => fail(`exited (${signal ?? code}) before it was ready`));
  });
}

/** `promtool check metrics` on `text` (stdin): its exit code and what it printed (nothing when clean). */
export function promtoolCheckMetrics(text: string): Promise<{ code: number | null; output: string }> {
  const bin = required(PROMTOOL_BIN, 'promtool');
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdin.end(text);
  });
}
