// Long-running processes inside network namespaces, their stdout read as lines: start one, wait for a line it
// prints, talk to it over stdin, and kill every one of them at the end, whatever happened.

import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Running {
  name: string;
  child: ChildProcess;
  /** Every stdout line so far, and stderr as one string. */
  lines: string[];
  stderr: () => string;
  exited: Promise<number | null>;
  send(line: string): void;
  /** Calls `listener` with every stdout line printed from now on. */
  onLine(listener: (line: string) => void): void;
  /** Resolves with the first line (already printed or still to come) that `match` accepts. */
  waitFor(match: (line: string) => boolean, timeoutMs: number): Promise<string>;
}

export class Processes {
  private readonly running: Running[] = [];

  /** `ip netns exec NS argv...`: `ip` execs the command, so the child's pid is the command's own. */
  start(name: string, ns: string, argv: readonly string[]): Running {
    const child = spawn('ip', ['netns', 'exec', ns, ...argv], { stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const listeners = new Set<(line: string) => void>();
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdin?.on('error', () => {});
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      lines.push(line);
      for (const listener of listeners) listener(line);
    });
    const exited = new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('exit', (code) => resolve(code));
    });
    const proc: Running = {
      name,
      child,
      lines,
      stderr: () => stderr,
      exited,
      send: (line) => child.stdin?.write(`${line}\n`),
      onLine: (listener) => {
        listeners.add(listener);
      },
      waitFor: (match, timeoutMs) =>
        new Promise((resolve, reject) => {
          const seen = lines.find(match);
          if (seen !== undefined) return resolve(seen);
          const done = (fn: () => void) => {
            clearTimeout(timer);
            listeners.delete(listener);
            fn();
          };
          const listener = (line: string) => {
            if (match(line)) done(() => resolve(line));
          };
          const timer = setTimeout(
            () =>
              done(() =>
                reject(new Error(`${name}: no expected line within ${timeoutMs} ms: ${output(proc)}`)),
              ),
            timeoutMs,
          );
          listeners.add(listener);
          exited.then((code) => done(() => reject(new Error(`${name} exited (${code}): ${output(proc)}`))));
        }),
    };
    this.running.push(proc);
    return proc;
  }

  /** SIGKILL, then wait for the exit: nothing started here outlives the test. */
  async kill(proc: Running): Promise<void> {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    await proc.exited;
  }

  async killAll(): Promise<void> {
    await Promise.all(this.running.map((proc) => this.kill(proc)));
  }
}

function output(proc: Running): string {
  return `${proc.lines.join('\n')}\n${proc.stderr()}`.trim();
}
