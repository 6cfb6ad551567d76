// Long-running child processes for test fixtures that listen on loopback: free ports picked by the kernel, a
// start that waits for the process to answer (an exit first rejects with its output, so a port taken meanwhile
// can be retried), and a stop that escalates to SIGKILL.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

const READY_MS = 60_000;
const ATTEMPTS = 4;

export interface Started {
  process: ChildProcess;
  output: () => string;
}

/**
 * Spawns `bin` (with `env` over this process's environment) and waits for `ready`; an exit before it (a port taken
 * meanwhile) rejects with its output.
 */
export async function started(
  bin: string,
  args: string[],
  ready: () => Promise<boolean>,
  env: NodeJS.ProcessEnv = {},
): Promise<Started> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  // A test worker that ends without stopping it must not leave it behind (etcd, an API server).
  const orphaned = () => child.kill('SIGKILL');
  process.once('exit', orphaned);
  child.once('exit', () => process.off('exit', orphaned));
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  let gone: number | null | undefined;
  void exited.then((code) => {
    gone = code;
  });
  const deadline = Date.now() + READY_MS;
  while (gone === undefined) {
    if (await ready()) return { process: child, output: () => out };
    if (Date.now() > deadline) {
      await ended(child);
      throw new Error(`${bin} not ready within ${READY_MS / 1000} s:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${bin} exited ${gone} before ready:\n${out}`);
}

export async function retry<T>(what: string, attempt: (n: number) => Promise<T>): Promise<T> {
  for (let n = 1; ; n += 1) {
    try {
      return await attempt(n);
    } catch (err) {
      // Free ports are picked by binding port 0 and letting go: another process may take one meanwhile.
      if (n >= ATTEMPTS || !/address already in use/.test(String(err))) {
        throw new Error(`envtest: ${what} did not start`, { cause: err });
      }
    }
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export async function reachable(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after 10 s. */
export async function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exit;
  clearTimeout(timer);
}
