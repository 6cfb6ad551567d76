// The README's main command: the companion with examples/probes.json in front of examples/app.mjs.

import { execFile } from 'node:child_process';
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
