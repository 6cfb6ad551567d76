// The README's first command: the companion with examples/probes.json in front of examples/app.mjs, printing what
// a terminal shows (curl's output: the body alone), and a second demo while one runs saying so before anything.
// lane: isolated: the demo listens on its fixed ports (14001, 15901-15904), as a user runs it.

import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

describe('npm run demo', () => {
  it('prints a passing verdict line for each example probe and exits with --once', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/demo.mjs', '--once'], {
      cwd: ROOT,
      timeout: 20_000,
    });
    // On all interfaces, so the same app can serve a pod, where kubelet and the companion dial the pod IP.
    expect(stdout).toMatch(/^example app on (\[::\]|0\.0\.0\.0): http :14001\/live/m);
    expect(stdout).toMatch(/^liveness app: GET http:\/\/127\.0\.0\.1:14001\/live -> 200 in \d+ ms$/m);
    expect(stdout).toMatch(/^readiness app: tcp 127\.0\.0\.1:14002 connected in \d+ ms$/m);
    expect(stdout).toMatch(/^startup app: grpc 127\.0\.0\.1:14003 service "" -> SERVING in \d+ ms$/m);
    expect(stdout).toMatch(/^healthcheck: tcp 127\.0\.0\.1:14002 connected in \d+ ms$/m);
  });

  it("the README's transcript is what it prints, times apart", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/demo.mjs', '--once'], {
      cwd: ROOT,
      timeout: 20_000,
    });
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const transcript = /^\$ npm run demo\n[\s\S]*?\n(example app on [\s\S]*?)\n\ndemo: serving/m.exec(
      readme,
    )?.[1];
    const times = (text: string) => text.replace(/in \d+ ms/g, 'in N ms');
    expect(times(transcript ?? '')).toBe(times(stdout.trimEnd()));
  });

  it('a second demo while one runs says which ports are taken, before anything else, and starts nothing', async () => {
    const first = spawn(process.execPath, ['scripts/demo.mjs'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        first.stdout.on('data', (d) => {
          out += d;
          if (out.includes('Ctrl-C stops.')) resolve();
        });
        first.once('exit', (code) => reject(new Error(`the first demo exited (${code}): ${out}`)));
      });
      const second = await promisify(execFile)(process.execPath, ['scripts/demo.mjs', '--once'], {
        cwd: ROOT,
        timeout: 20_000,
      }).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      expect(second.code).toBe(1);
      expect(second.stdout).toBe('');
      expect(second.stderr).toMatch(/^demo: cannot listen on 14001 \(EADDRINUSE\), .*15904 \(EADDRINUSE\): /);
    } finally {
      const exited = new Promise((resolve) => first.once('exit', resolve));
      first.kill('SIGINT');
      await exited;
    }
  });
});

describe("the README's two commands", () => {
  it('are the scripts package.json has, shown as a fresh machine runs them', () => {
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const scripts = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts;
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
    expect(scripts.demo).toBe('node scripts/demo.mjs');
    // Type check and lint first, then every suite: scripts/test.mjs runs vitest's two lanes.
    expect(scripts.test).toBe('tsc --noEmit && biome check . && node scripts/test.mjs');
    expect(readFileSync(`${ROOT}scripts/test.mjs`, 'utf8')).toContain("[vitest, 'run', '--project', project");
  });
});
