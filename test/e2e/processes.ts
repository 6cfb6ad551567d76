// Long-running processes inside network namespaces, their stdout read as lines: start one, wait for a line it
// prints, talk to it over stdin, and kill every one of them at the end, whatever happened.

import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { lineFeed } from '../helpers/line-feed.js';

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
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdin?.on('error', () => {});
    const exited = new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('exit', (code) => resolve(code));
    });
    const feed = lineFeed<string, number | null>(exited, {
      timedOut: (timeoutMs) => `${name}: no expected line within ${timeoutMs} ms: ${output(proc)}`,
      exitedEarly: (code) => `${name} exited (${code}): ${output(proc)}`,
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', feed.push);
    const proc: Running = {
      name,
      child,
      lines: feed.lines,
      stderr: () => stderr,
      exited,
      send: (line) => child.stdin?.write(`${line}\n`),
      onLine: feed.onLine,
      waitFor: feed.waitFor,
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
