// Runs the built CLI (dist/cli.mjs) as a child process, the way users and the image do.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = `${ROOT}dist/cli.mjs`;

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
}

/** Runs the CLI to completion (killed after `timeoutMs`), feeding `input` on stdin. */
export function runCli(args: string[], options: RunOptions = {}): Promise<Exit> {
  return runScript(CLI, args, options);
}

/** Runs `node script ...args` from the repo root to completion (killed after `timeoutMs`, default 10 s). */
export function runScript(script: string, args: string[], options: RunOptions = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Starts a long-running CLI command (`cli`: another copy of dist/cli.mjs) and resolves with the first stdout JSON line `isReady` takes. */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  isReady: (line: Record<string, unknown>) => boolean,
  cli = CLI,
): Promise<{ child: ChildProcess; line: Record<string, unknown>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready within 10 s: ${out}${err}`));
    }, 10_000);
    child.stderr?.on('data', (d) => {
      err += d;
    });
    let ready = false;
    child.stdout?.on('data', (d) => {
      out += d;
      // Once ready, the lines are only kept: parsing all of them again on every chunk would stall this process.
      if (ready) return;
      for (const text of out.split('\n')) {
        if (!text.startsWith('{')) continue;
        const line = JSON.parse(text) as Record<string, unknown>;
        if (isReady(line)) {
          ready = true;
          clearTimeout(timer);
          resolve({ child, line, output: () => out + err });
          return;
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before ready: ${out}${err}`));
    });
  });
}

export type ServePorts = Record<'liveness' | 'readiness' | 'startup' | 'healthcheck', number>;

/**
 * The built `serve` on ephemeral loopback ports with this probe table. stop() ends it with SIGINT, so it stops
 * without waiting for an app (serve's SIGTERM drain would).
 */
export async function startServe(
  table: unknown,
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; ports: ServePorts; stop(): Promise<void> }> {
  const { child, line } = await startCli(
    ['serve'],
    {
      OSM_HEALTHCHECK_PORTS: '0,0,0,0',
      OSM_HEALTHCHECK_HOST: '127.0.0.1',
      // undefined: no table, the osm-edge drop-in's header-driven probes only.
      ...(table === undefined ? {} : { OSM_HEALTHCHECK_PROBES: JSON.stringify(table) }),
      ...env,
    },
    (l) => l.msg === 'serving' || l.msg === 'serving header-driven probes only (no probe table)',
  );
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    await exited;
  };
  return { child, ports: line.ports as ServePorts, stop };
}
