// The README's first command: the companion with examples/probes.json in front of examples/app.mjs.

import { execFile } from 'node:child_process';
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
    expect(stdout).toMatch(/^200 liveness app: GET http:\/\/127\.0\.0\.1:14001\/live -> 200 in \d+ ms$/m);
    expect(stdout).toMatch(/^200 readiness app: tcp 127\.0\.0\.1:14002 connected in \d+ ms$/m);
    expect(stdout).toMatch(/^200 startup app: grpc 127\.0\.0\.1:14003 service "" -> SERVING in \d+ ms$/m);
    expect(stdout).toMatch(/^200 healthcheck: tcp 127\.0\.0\.1:14002 connected in \d+ ms$/m);
  });
});

describe("the README's two commands", () => {
  it('are the scripts package.json has, shown as a fresh machine runs them', () => {
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const scripts = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts;
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
    expect(scripts.demo).toBe('node scripts/demo.mjs');
    expect(scripts.test).toMatch(/vitest run/);
  });
});
