// Processes for the benchmark: spawn pinned to a core, wait until ports answer HTTP, read RSS, stop.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { cpus } from 'node:os';

/** Servers on core 0, everything client-side (this process, the app, load, probers) on core 1. */
// cpus(), not availableParallelism(): the latter sees only the core this process is already pinned to.
export const CORES = cpus().length;
export const pinned = CORES >= 2 && hasTaskset();
export const SERVER_CORE = '0';
export const CLIENT_CORE = '1';

function hasTaskset() {
  try {
    accessSync('/usr/bin/taskset', constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// Every child still running when the bench exits, also on a crash, is killed with it.
const children = new Set();
process.on('exit', () => {
  for (const child of children) killTree(child.pid);
});

/**
 * `node ...args` on `core` (when pinning is possible); stdout piped, stderr inherited. `wrap` turns the command
 * into one that first joins a cgroup (bench/cgroup.mjs); the pid stays node's, since each wrapper execs the next.
 */
export function spawnNode(core, args, env = {}, wrap = undefined) {
  const plain = pinned ? ['taskset', '-c', core, process.execPath, ...args] : [process.execPath, ...args];
  return spawnCommand(wrap === undefined ? plain : wrap(plain), env);
}

/** Any command, killed with the bench like every child; stdout piped (and drained), stderr inherited. */
export function spawnCommand([command, ...argv], env = {}) {
  const child = spawn(command, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  // Drained so a chatty server never blocks on a full pipe.
  child.stdout.on('data', () => {});
  return child;
}

/** The first stdout line of a child, parsed as JSON. */
export async function firstJsonLine(child) {
  let text = '';
  for await (const chunk of child.stdout) {
    text += chunk;
    const end = text.indexOf('\n');
    if (end >= 0) return JSON.parse(text.slice(0, end));
  }
  throw new Error(`process ${child.pid} exited before printing a line`);
}

/** Resolves once a stdout line of `child` contains `text`; rejects if it exits first or after `limitMs`. */
export function lineContaining(child, text, limitMs = 15_000) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => finish(new Error(`no "${text}" from process ${child.pid} in ${limitMs} ms`)),
      limitMs,
    );
    const onData = (chunk) => {
      seen = (seen + chunk).slice(-4096);
      if (seen.includes(text)) finish();
    };
    const onExit = (code, signal) =>
      finish(new Error(`process ${child.pid} exited (${code ?? signal}) before "${text}"`));
    function finish(err) {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('exit', onExit);
      if (err === undefined) resolve();
      else reject(err);
    }
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
}

/** `n` distinct ports the kernel just handed out as free (ephemeral range), released for the servers to bind. */
export async function freePorts(n) {
  const servers = [];
  for (let i = 0; i < n; i++) {
    const server = createServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function answers(port) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Resolves once every port has answered an HTTP request (any status), polling each about every 1 ms. */
export async function waitAnswering(ports, child, limitMs = 10_000) {
  const started = performance.now();
  await Promise.all(
    ports.map(async (port) => {
      while (!(await answers(port))) {
        if (child.exitCode !== null)
          throw new Error(`process exited (${child.exitCode}) before port ${port}`);
        if (performance.now() - started > limitMs) throw new Error(`port ${port} not answering`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }),
  );
}

/** Memory in MiB from /proc: resident (rss), its anonymous part (anon: heap, stacks, malloc) and the peak (hwm). */
export function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => {
    const match = new RegExp(`${name}:\\s+(\\d+) kB`).exec(status);
    if (match === null) throw new Error(`no ${name} for ${pid}`);
    return Number(match[1]) / 1024;
  };
  return { rss: field('VmRSS'), anon: field('RssAnon'), hwm: field('VmHWM') };
}

/** CPU time in µs the process has used so far, all threads, from /proc (schedstat: nanoseconds on a CPU). */
export function cpuMicros(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
  }
  return ns / 1000;
}

export async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  killTree(child.pid);
  await once(child, 'exit');
}

/** PID and its descendants (/proc/PID/task/PID/children), PID first: a supervised companion is two processes. */
export function processTree(pid) {
  let children = '';
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  } catch {}
  return [pid, ...(children === '' ? [] : children.split(' ').flatMap((c) => processTree(Number(c))))];
}

/** SIGKILL to PID and every descendant, found before any dies (an orphan would be reparented out of reach). */
function killTree(pid) {
  for (const p of processTree(pid)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  }
}
