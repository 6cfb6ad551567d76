// The companion as the image runs it: image/supervise.sh (tini's child in the image) running the built serve on
// fixed loopback ports, so a restarted serve listens where the first one did. Its stdout is read as NDJSON lines.

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { CLI, ROOT } from './cli.js';
import { lineFeed } from './line-feed.js';

export const SUPERVISE = `${ROOT}image/supervise.sh`;

export type Line = Record<string, unknown>;
type Exit = { code: number | null; signal: NodeJS.Signals | null };

export interface Supervised {
  /** The supervisor: the container's main process (tini's only child in the image), in a process group of its own. */
  child: ChildProcess;
  lines: Line[];
  output(): string;
  /** Resolves with the first line (already printed or still to come) that `match` accepts. */
  waitFor(match: (line: Line) => boolean, timeoutMs: number): Promise<Line>;
  /** The serve running now: the supervisor's child. */
  servePid(): number | undefined;
  exited: Promise<Exit>;
}

/**
 * `sh image/supervise.sh node dist/cli.mjs ARGS...` with `env` over this process's; `wrap` turns that argv into
 * another (joining a cgroup first). Detached: the group is the container, for a kill of all of it.
 */
export function supervise(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  wrap: (argv: string[]) => string[] = (argv) => argv,
): Supervised {
  const [command = 'sh', ...argv] = wrap(['sh', SUPERVISE, process.execPath, CLI, ...args]);
  const child = spawn(command, argv, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stderr?.on('data', (chunk) => {
    text += chunk;
  });
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const feed = lineFeed<Line, Exit>(exited, {
    timedOut: (timeoutMs) => `no expected line within ${timeoutMs} ms:\n${text}`,
    exitedEarly: ({ code, signal }) => `the supervisor exited (${code ?? signal}):\n${text}`,
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (raw) => {
    text += `${raw}\n`;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      return;
    }
    feed.push(line);
  });
  return {
    child,
    lines: feed.lines,
    output: () => text,
    exited,
    waitFor: feed.waitFor,
    servePid: () => {
      try {
        const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
        return children === '' ? undefined : Number(children.split(' ')[0]);
      } catch {
        return undefined;
      }
    },
  };
}

/** serve as the image runs it, answering `table` (OSM_HEALTHCHECK_PROBES) on `ports` of 127.0.0.1. */
export function superviseServe(
  ports: readonly number[],
  table: object,
  wrap?: (argv: string[]) => string[],
  more: Record<string, string> = {},
): Supervised {
  const env = {
    OSM_HEALTHCHECK_PORTS: ports.join(','),
    OSM_HEALTHCHECK_HOST: '127.0.0.1',
    OSM_HEALTHCHECK_PROBES: JSON.stringify(table),
    ...more,
  };
  return supervise(['serve'], env, wrap);
}

/** Where kubelet asks serve (on `ports`, the liveness port first) for the app's liveness. */
export const appLivenessUrl = (ports: readonly number[]) =>
  `http://127.0.0.1:${ports[0]}/osm-liveness-probe/app`;

/** SIGKILL to the whole group (supervisor and serve), then wait for the supervisor's exit. */
export async function killGroup(s: Supervised): Promise<void> {
  try {
    if (s.child.pid !== undefined) process.kill(-s.child.pid, 'SIGKILL');
  } catch {}
  await s.exited;
}

/** `n` TCP ports free on 127.0.0.1 now (bound to 0 and released). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (server) =>
        new Promise<number>((resolve) =>
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            resolve(typeof address === 'object' && address !== null ? address.port : 0);
          }),
        ),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export interface Probed {
  /** performance.now() when the request started. */
  at: number;
  status: number | undefined;
  /** The body, or what went wrong: `connect ECONNREFUSED ...`, `timeout`. */
  detail: string;
}

/** One kubelet-like GET: `Connection: close`, the answer within `timeoutMs` or a failure. */
export function probe(url: string, timeoutMs: number): Promise<Probed> {
  const at = performance.now();
  return new Promise((resolve) => {
    const req = request(
      url,
      { headers: { 'user-agent': 'kube-probe/1.32', connection: 'close' }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ at, status: res.statusCode, detail: body }));
        res.on('error', (err) => resolve({ at, status: undefined, detail: err.message }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ at, status: undefined, detail: err.message }));
    req.end();
  });
}

/** Probes `url` back to back, `gapMs` apart, until stopped: the dense record the outage is read from. */
export function sampler(url: string, timeoutMs: number, gapMs: number): { stop(): Promise<Probed[]> } {
  const samples: Probed[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      samples.push(await probe(url, timeoutMs));
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return samples;
    },
  };
}
