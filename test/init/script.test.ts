// Running the init script: finding it from src/ and from dist/, and turning its exit status, stderr and
// timeouts into results and errors. A real stand-in script (fixtures/runner) plays each outcome.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { initCommand } from '../../src/commands/init.js';
import { HealthcheckError, UsageError } from '../../src/errors.js';
import { findInitDir, INIT_DIR_ENV, runInitScript } from '../../src/init/script.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const INIT_DIR = join(REPO, 'init');
const FIXTURE_DIR = fileURLToPath(new URL('fixtures/runner', import.meta.url));

describe('findInitDir', () => {
  it.each([
    { name: 'from src/init/script.ts (vitest)', from: join(REPO, 'src/init/script.ts') },
    { name: 'from the bundle dist/cli.mjs', from: join(REPO, 'dist/cli.mjs') },
  ])('$name', ({ from }) => {
    expect(findInitDir(new URL(`file://${from}`), {})).toBe(INIT_DIR);
  });

  it('the module finds it by itself', () => {
    expect(findInitDir(undefined, {})).toBe(INIT_DIR);
  });

  it(`${INIT_DIR_ENV} wins`, () => {
    expect(findInitDir(undefined, { [INIT_DIR_ENV]: '/opt/osm/init' })).toBe('/opt/osm/init');
  });

  it('says where it looked when there is no init/ above', () => {
    const lonely = mkdtempSync(join(tmpdir(), 'osm-hc-init-'));
    try {
      expect(() => findInitDir(new URL(`file://${lonely}/cli.mjs`), {})).toThrow(
        `cannot find init/osm-healthcheck-init.sh above ${lonely}; set ${INIT_DIR_ENV}`,
      );
    } finally {
      rmSync(lonely, { recursive: true });
    }
  });
});

describe('runInitScript', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  async function run(mode: string, timeoutMs?: number) {
    process.env.FIXTURE_MODE = mode;
    const notes: string[] = [];
    const outcome = runInitScript(['--ports', '15901-15904', '--dry-run'], {
      initDir: FIXTURE_DIR,
      onNote: (line) => notes.push(line),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    return { outcome, notes };
  }

  it('success: stdout exactly as written, stderr lines passed on as notes', async () => {
    const { outcome, notes } = await run('ok');
    await expect(outcome).resolves.toBe('args: --ports 15901-15904 --dry-run\n');
    expect(notes).toEqual(['osm-healthcheck-init: a decision worth noting']);
  });

  it.each([
    {
      name: 'failure: the last stderr line is the error, the lines before it are notes',
      mode: 'fail',
      type: HealthcheckError,
      code: 'OSM_HC_INIT',
      message: 'IPv4: iptables-nft-restore refused the transaction, no IPv4 rule changed',
      notes: ['osm-healthcheck-init: backend nft (auto)', 'osm-healthcheck-init: IPv6 skipped'],
    },
    {
      name: "exit 2 is the script's usage check",
      mode: 'usage',
      type: UsageError,
      code: 'OSM_HC_USAGE',
      message:
        'osm-healthcheck-init.sh refused its arguments: unknown argument "--nope" (see --help) (the flags osm-healthcheck init --help lists)',
      notes: [],
    },
    {
      name: 'a failure without a word still says what happened',
      mode: 'silent',
      type: HealthcheckError,
      code: 'OSM_HC_INIT',
      message: 'osm-healthcheck-init.sh exited with code 3 and no message',
      notes: [],
    },
  ])('$name', async ({ mode, type, code, message, notes: expectedNotes }) => {
    const { outcome, notes } = await run(mode);
    const err = await outcome.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({ code, message });
    expect(notes).toEqual(expectedNotes);
  });

  it('a hung script is killed at the timeout', async () => {
    const started = Date.now();
    const { outcome } = await run('slow', 300);
    await expect(outcome).rejects.toMatchObject({
      code: 'OSM_HC_INIT',
      message: 'osm-healthcheck-init.sh did not finish within 300 ms',
    });
    // The fixture sleeps 30 s; being back well before that proves it was killed, not awaited.
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('init command', () => {
  const saved = { ...process.env };
  const marker = join(tmpdir(), `osm-hc-init-marker-${process.pid}`);
  afterEach(() => {
    process.env = { ...saved };
    rmSync(marker, { force: true });
  });

  it.each([
    { name: 'unknown flag', argv: ['--bogus'] },
    { name: 'port 0', argv: ['--ports', '0'] },
    { name: 'port 70000', argv: ['--ports', '70000'] },
    { name: 'a-b', argv: ['--ports', 'a-b'] },
    { name: 'empty port list', argv: ['--ports', ''] },
    { name: 'bad --ipv6', argv: ['--ipv6', 'both'] },
    { name: 'bad --backend', argv: ['--backend', 'ebpf'] },
    { name: '--uid 0', argv: ['--uid', '0'] },
  ])('$name: a usage error before any script runs', async ({ argv }) => {
    process.env[INIT_DIR_ENV] = FIXTURE_DIR;
    process.env.FIXTURE_MARKER = marker;
    await expect(initCommand.run(argv)).rejects.toBeInstanceOf(UsageError);
    expect(existsSync(marker)).toBe(false);
  });

  it('good flags reach the script, spelled out', async () => {
    process.env[INIT_DIR_ENV] = FIXTURE_DIR;
    process.env.FIXTURE_MARKER = marker;
    process.env.FIXTURE_MODE = 'quiet';
    await initCommand.run(['--ports', '15902,15901', '--ipv6', 'off', '--cleanup']);
    expect(readFileSync(marker, 'utf8')).toBe(
      '--ports 15901-15902 --uid 65532 --ipv6 off --backend auto --cleanup\n',
    );
  });
});
