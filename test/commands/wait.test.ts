// `osm-healthcheck wait` as kubelet runs it in the companion's postStart hook: the built CLI against a real
// `serve` (already up, coming up while it waits, killed while it waits) and against ports where no companion
// answers (nothing listening, a 503, a server that never answers): exit 0 once /healthz says 200, else exit 1 in
// bounded time with what it asked and the last answer.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { closedPort, httpApp, tcpApp } from '../helpers/apps.js';
import { CLI, ROOT, runCli, startCli } from '../helpers/cli.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';

const LOOPBACK = { OSM_HEALTHCHECK_HOST: '127.0.0.1' };

/** Four free loopback ports, held together while chosen so they differ, then released for `serve`. */
async function freePorts(): Promise<string> {
  const held = await Promise.all([0, 1, 2, 3].map(() => tcpApp((s) => s.destroy())));
  await Promise.all(held.map((app) => app.close()));
  return held.map((app) => app.port).join(',');
}

/** `--ports` naming `healthcheck` as the port /healthz is on (the other three are not dialled). */
const portsFor = (healthcheck: number) => `1,2,3,${healthcheck}`;

/** Starts `wait` and resolves once it says it is waiting: its first attempt has failed. */
async function startWait(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; stderr: () => string; exit: Promise<Exit> }> {
  const child = spawn(process.execPath, [CLI, 'wait', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  const waiting = new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (d) => {
      stderr += d;
      if (stderr.includes('waiting for')) resolve();
    });
    child.on('exit', () => reject(new Error(`wait exited before waiting: ${stdout}${stderr}`)));
  });
  const exit = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  await waiting;
  return { child, stderr: () => stderr, exit };
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startServe(env: NodeJS.ProcessEnv) {
  return startCli(
    ['serve'],
    { ...LOOPBACK, ...env },
    (l) => String(l.msg).startsWith('serving') && l.ports !== undefined,
  );
}

describe('wait against a real serve', () => {
  it('a companion already listening: exit 0 at once', async () => {
    const serve = await startServe({ OSM_HEALTHCHECK_PORTS: '0,0,0,0' });
    try {
      const healthcheck = (serve.line.ports as Record<string, number>).healthcheck ?? 0;
      const exit = await runCli(['wait', '--ports', portsFor(healthcheck)], { env: LOOPBACK });
      expect(exit.stderr).toBe('');
      expect(exit.code).toBe(0);
      expect(exit.stdout).toMatch(
        new RegExp(
          `^osm-healthcheck wait: http://127.0.0.1:${healthcheck}/healthz answered 200 after \\d+ ms \\(attempt 1\\)\\n$`,
        ),
      );
    } finally {
      serve.child.kill('SIGKILL');
    }
  });

  it('a companion that starts while it waits: exit 0 once it listens, ports from the env as serve reads them', async () => {
    const ports = await freePorts();
    const wait = await startWait(['--timeout', '30'], { ...LOOPBACK, OSM_HEALTHCHECK_PORTS: ports });
    expect(wait.stderr()).toContain('connect ECONNREFUSED');
    const serve = await startServe({ OSM_HEALTHCHECK_PORTS: ports });
    try {
      const exit = await wait.exit;
      expect(exit.code, exit.stderr).toBe(0);
      expect(exit.stdout).toContain('answered 200');
    } finally {
      serve.child.kill('SIGKILL');
      wait.child.kill('SIGKILL');
    }
  });

  it('a companion killed while it waits: exit 1 at the timeout, the last answer a refusal', async () => {
    const serve = await startServe({ OSM_HEALTHCHECK_PORTS: '0,0,0,0' });
    const healthcheck = (serve.line.ports as Record<string, number>).healthcheck ?? 0;
    // Stopped, it still accepts (the kernel's backlog) but never answers: wait's attempts time out.
    serve.child.kill('SIGSTOP');
    try {
      const started = performance.now();
      const wait = await startWait(['--ports', portsFor(healthcheck), '--timeout', '3']);
      serve.child.kill('SIGKILL');
      await once(serve.child, 'exit');
      const exit = await wait.exit;
      expect(exit.code).toBe(1);
      expect(exit.stderr).toContain('no answer within 1000 ms');
      expect(exit.stderr).toMatch(
        new RegExp(
          `the companion did not answer 200 on http://127.0.0.1:${healthcheck}/healthz within 3 s \\(\\d+ attempts\\); last: connect ECONNREFUSED 127.0.0.1:${healthcheck} \\[OSM_HC_WAIT\\]\\n$`,
        ),
      );
      expect(performance.now() - started).toBeLessThan(3_000 + BUSY_MACHINE_SLACK_MS);
    } finally {
      serve.child.kill('SIGKILL');
    }
  });
});

describe('wait where no companion answers: exit 1 within the timeout, with the last answer', () => {
  it.each([
    {
      name: 'nothing listening',
      start: async () => ({ port: await closedPort(), close: async () => {} }),
      last: /last: connect ECONNREFUSED 127\.0\.0\.1:\d+ \[OSM_HC_WAIT\]$/,
    },
    {
      name: 'a server answering 503',
      start: () =>
        httpApp((_req, res) => {
          res.statusCode = 503;
          res.end('not ready: listeners starting or draining\n');
        }),
      last: /last: answered 503: not ready: listeners starting or draining \[OSM_HC_WAIT\]$/,
    },
    {
      name: 'a server that accepts and never answers',
      start: () => tcpApp(() => {}),
      last: /last: no answer within \d+ ms \[OSM_HC_WAIT\]$/,
    },
  ])('$name', async ({ start, last }) => {
    const server = await start();
    try {
      const started = performance.now();
      const exit = await runCli(['wait', '--ports', portsFor(server.port), '--timeout', '1.5']);
      const took = performance.now() - started;
      expect(exit.code).toBe(1);
      expect(exit.stdout).toBe('');
      const lines = exit.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        new RegExp(`^osm-healthcheck wait: waiting for http://127.0.0.1:${server.port}/healthz: `),
      );
      expect(lines[1]).toMatch(
        new RegExp(
          `^osm-healthcheck wait: the companion did not answer 200 on http://127.0.0.1:${server.port}/healthz within 1.5 s`,
        ),
      );
      expect(lines[1]).toMatch(last);
      expect(took).toBeGreaterThanOrEqual(1400);
      expect(took).toBeLessThan(1_500 + BUSY_MACHINE_SLACK_MS);
    } finally {
      await server.close();
    }
  });
});

describe('wait refuses bad usage: exit 2, naming the flag', () => {
  it.each([
    {
      name: 'a timeout of 0',
      args: ['--timeout', '0'],
      message: '--timeout "0" is not accepted (seconds, more than 0 and at most 3600)',
    },
    {
      name: 'a timeout over an hour',
      args: ['--timeout', '3601'],
      message: '--timeout "3601" is not accepted (seconds, more than 0 and at most 3600)',
    },
    {
      name: 'a timeout that is no number',
      args: ['--timeout', '5s'],
      message: '--timeout "5s" is not accepted',
    },
    {
      name: 'three ports',
      args: ['--ports', '1,2,3'],
      message: '--ports "1,2,3" is not accepted (four ports 0-65535',
    },
    {
      name: 'port 0 for /healthz',
      args: ['--ports', '0,0,0,0'],
      message: '--ports "0,0,0,0" is not accepted (the real healthcheck port, not 0)',
    },
    {
      name: 'a host that is no IP address',
      args: ['--host', 'companion'],
      message: '--host "companion" is not accepted (an IP address)',
    },
    { name: 'a stray argument', args: ['now'], message: 'unexpected argument "now" (wait takes flags only' },
    { name: 'an unknown flag', args: ['--retries', '3'], message: 'unknown flag --retries (wait takes ' },
  ])('$name', async ({ args, message }) => {
    const exit = await runCli(['wait', ...args], {
      env: { OSM_HEALTHCHECK_PORTS: '', OSM_HEALTHCHECK_HOST: '' },
    });
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(message);
    expect(exit.stderr.trimEnd()).toMatch(/\[OSM_HC_USAGE\]$/);
  });
});
