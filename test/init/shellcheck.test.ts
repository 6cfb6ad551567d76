// The init scripts are POSIX sh (no bash-isms: init images often have only busybox or dash) and clean under
// shellcheck, fixtures included.

import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { SHELLCHECK, skipWithout } from '../helpers/system-tools.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPTS = [
  ...readdirSync(`${REPO}init`).map((f) => `init/${f}`),
  'test/init/fixtures/runner/osm-healthcheck-init.sh',
  ...readdirSync(`${REPO}test/init/fixtures/no-nat`).map((f) => `test/init/fixtures/no-nat/${f}`),
];

describe.skipIf(skipWithout('test/init/shellcheck.test.ts', [SHELLCHECK]))('shellcheck', () => {
  it.each(SCRIPTS)('%s', async (script) => {
    const result = await execa('shellcheck', ['--shell=sh', '--external-sources', script], {
      cwd: REPO,
      reject: false,
    });
    expect(result.stdout).toBe('');
    expect(result.exitCode).toBe(0);
  });
});

describe('sh -n (also without shellcheck)', () => {
  it.each(SCRIPTS.filter((s) => s.startsWith('init/')))('%s parses under sh -n', async (script) => {
    const result = await execa('sh', ['-n', script], { cwd: REPO, reject: false });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });
});
