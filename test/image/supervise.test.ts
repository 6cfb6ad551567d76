// image/supervise.sh, the image's entrypoint under tini, with the real serve: other subcommands exec'd as they are;
// serve restarted at once when it dies (a pino-shaped line, the count on /metrics), never after SIGTERM or SIGINT
// (serve's own exit status is the container's), and given up to kubelet after too many exits in a row; V8's heap
// capped from the memory cgroup's limit. POSIX sh, clean under shellcheck.

import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cgroupTree } from '../../bench/cgroup-tree.mjs';
import pkg from '../../package.json' with { type: 'json' };
import { CLI, ROOT } from '../helpers/cli.js';
import {
  freePorts,
  killGroup,
  type Line,
  probe,
  SUPERVISE,
  type Supervised,
  supervise,
} from '../helpers/supervised.js';
import { root, SHELLCHECK, skipWithout, TINI } from '../helpers/system-tools.js';

const running: Supervised[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map(killGroup));
});

async function serving(env: NodeJS.ProcessEnv = {}) {
  const ports = await freePorts(4);
  const s = supervise(['serve'], {
    OSM_HEALTHCHECK_PORTS: ports.join(','),
    OSM_HEALTHCHECK_HOST: '127.0.0.1',
    ...env,
  });
  running.push(s);
  await s.waitFor(isServing(0), 10_000);
  return { s, ports, metrics: `http://127.0.0.1:${ports[3]}/metrics` };
}

const isServing =
  (restarts: number) =>
  (l: Line): boolean =>
    String(l.msg).startsWith('serving') && l.restarts === restarts;

describe.skipIf(skipWithout('shellcheck of image/supervise.sh', [SHELLCHECK]))('shellcheck', () => {
  it('image/supervise.sh is clean as POSIX sh', async () => {
    const result = await execa('shellcheck', ['--shell=sh', 'image/supervise.sh'], {
      cwd: ROOT,
      reject: false,
    });
    expect(result.stdout).toBe('');
    expect(result.exitCode).toBe(0);
  });
});

describe('image/supervise.sh', () => {
  it('parses under sh -n, and is executable (the image runs it by its #!/bin/sh)', async () => {
    const result = await execa('sh', ['-n', SUPERVISE], { reject: false });
    expect(result.exitCode).toBe(0);
    expect(readFileSync(SUPERVISE, 'utf8').startsWith('#!/bin/sh\n')).toBe(true);
    expect((await execa('test', ['-x', SUPERVISE], { reject: false })).exitCode).toBe(0);
  });

  it.each([
    { name: '--version: exec, its output', args: ['--version'], code: 0, out: pkg.version },
    { name: 'a usage error: its exit status', args: ['inject', '--no-such-flag'], code: 2, out: '' },
  ])('runs other subcommands as they are: $name', async ({ args, code, out }) => {
    const result = await execa('sh', [SUPERVISE, process.execPath, CLI, ...args], { reject: false });
    expect(result.exitCode).toBe(code);
    expect(result.stdout).toBe(out);
  });

  it.skipIf(skipWithout('inject through tini and image/supervise.sh', [TINI]))(
    "the README's `docker run --rm -i IMAGE inject < deploy.yaml`: stdin reaches inject past tini and the supervisor",
    async () => {
      const manifest = readFileSync(`${ROOT}test/fixtures/inject/deployment.yaml`, 'utf8');
      // -s: tini is PID 1 in the container; here it registers as a subreaper instead, without a warning.
      const entrypoint = ['-s', '--', 'sh', SUPERVISE, process.execPath, CLI, 'inject'];
      const viaImage = await execa('tini', entrypoint, { input: manifest, reject: false });
      const direct = await execa(process.execPath, [CLI, 'inject'], { input: manifest, reject: false });
      expect(viaImage.exitCode).toBe(0);
      expect(viaImage.stdout).toContain('osm-healthcheck-init');
      expect({ stdout: viaImage.stdout, stderr: viaImage.stderr }).toEqual({
        stdout: direct.stdout,
        stderr: direct.stderr,
      });
    },
  );

  it('restarts serve at once after SIGKILL, logs it as pino does and counts it on /metrics', async () => {
    const { s, metrics } = await serving();
    const first = s.servePid();
    expect(first).toBeDefined();
    process.kill(first as number, 'SIGKILL');
    const logged = await s.waitFor((l) => l.msg === 'serve exited: restarting it', 5_000);
    expect(logged).toEqual({
      level: 'warn',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      name: 'osm-healthcheck',
      signal: 'KILL',
      restarts: 1,
      msg: 'serve exited: restarting it',
    });
    await s.waitFor(isServing(1), 10_000);
    expect(s.servePid()).not.toBe(first);
    const scraped = await probe(metrics, 5_000);
    expect(scraped.detail).toMatch(/^osm_healthcheck_restarts_total 1$/m);
  });

  it.each([
    { signal: 'SIGTERM' as const, code: 0 },
    { signal: 'SIGINT' as const, code: 0 },
  ])(
    'forwards $signal to serve, which drains and exits; not restarted, its status is the supervisor’s',
    async ({ signal, code }) => {
      // No table: serve drains at once on either signal (docs/architecture.md#start-and-stop-order).
      const { s } = await serving();
      s.child.kill(signal);
      const exit = await s.exited;
      expect(exit).toEqual({ code, signal: null });
      expect(s.lines.some((l) => l.msg === 'stopped')).toBe(true);
      expect(s.lines.some((l) => l.msg === 'serve exited: restarting it')).toBe(false);
    },
  );

  it('keeps the stop order: on SIGTERM serve waits for the app with the table, and its exit is final', async () => {
    // The app's port is one nothing listens on: gone at once, so serve drains after its first poll.
    const [gone] = await freePorts(1);
    const table = JSON.stringify({ liveness: { app: { tcpSocket: { port: gone } } } });
    const { s } = await serving({ OSM_HEALTHCHECK_PROBES: table });
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain('"reason":"app gone"');
  });

  it('gives up to kubelet after 10 restarts within 60 s, with serve’s last exit status', async () => {
    // serve cannot listen: the port is a test's own listener, so every serve exits 1 at once (OSM_HC_LISTEN).
    const [taken = 0] = await freePorts(1);
    const { createServer } = await import('node:net');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(taken, '127.0.0.1', resolve));
    try {
      const [a, b, c] = await freePorts(3);
      const s = supervise(['serve'], {
        OSM_HEALTHCHECK_PORTS: [a, b, c, taken].join(','),
        OSM_HEALTHCHECK_HOST: '127.0.0.1',
      });
      running.push(s);
      const exit = await s.exited;
      expect(exit).toEqual({ code: 1, signal: null });
      const restarts = s.lines.filter((l) => l.msg === 'serve exited: restarting it');
      expect(restarts.map((l) => l.restarts)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(s.lines.at(-1)).toMatchObject({
        level: 'error',
        msg: 'serve keeps exiting: giving up, kubelet restarts the container',
        code: 1,
        restarts: 10,
        exits: 11,
        windowSeconds: 60,
      });
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 60_000);
});

const CGROUP_NEEDS = [root('a memory cgroup with a limit, as kubelet makes for a container')];

describe.skipIf(skipWithout('image/supervise.sh in a memory cgroup', CGROUP_NEEDS))(
  'image/supervise.sh in a memory cgroup',
  () => {
    let tree: ReturnType<typeof cgroupTree>['tree'];
    beforeAll(() => {
      const made = cgroupTree('osm-hc-test-supervise');
      if (made.tree === undefined) throw new Error(made.reason);
      tree = made.tree;
    });
    afterAll(() => tree?.remove());

    it.each([
      { name: 'limited to 48 MiB: V8 gets half', limit: 48 * 2 ** 20, flag: '--max-heap-size=24' },
      { name: 'limited to 448 MiB (what inject writes)', limit: 448 * 2 ** 20, flag: '--max-heap-size=224' },
      { name: 'no limit: no flag, V8 sizes its heap itself', limit: undefined, flag: undefined },
    ])('$name', async ({ name, limit, flag }) => {
      const cg = tree?.child(`companion-${name.split(' ')[2]}`, { memoryMax: limit });
      if (cg === undefined) throw new Error('no cgroup tree');
      const ports = await freePorts(4);
      const s = supervise(
        ['serve'],
        { OSM_HEALTHCHECK_PORTS: ports.join(','), OSM_HEALTHCHECK_HOST: '127.0.0.1' },
        (argv) => cg.wrap(argv),
      );
      running.push(s);
      await s.waitFor(isServing(0), 10_000);
      const argv = readFileSync(`/proc/${s.servePid()}/cmdline`, 'utf8').split('\0');
      expect(argv.filter((a) => a.startsWith('--max-heap-size'))).toEqual(flag === undefined ? [] : [flag]);
    });
  },
);
