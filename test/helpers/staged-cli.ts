// The built CLI as the image lays it out (dist/ and init/: the bundles load nothing from node_modules), copied
// into a temporary directory every user can read. Tests that run it as another uid (the companion's 65532,
// nobody's 65534) could not read a checkout under a 0700 home or `mktemp -d`. vitest's global setup stages it once
// per run and removes it afterwards; tests ask for it with stagedCli().

import { chmodSync, cpSync, lstatSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The staged copy's root directory: `<dir>/dist/cli.mjs` is the CLI. */
    stagedCliDir: string;
  }
}

export interface Staged {
  dir: string;
  remove(): void;
}

/** The staged `dist/cli.mjs`, for tests that run the CLI as a user other than the one running the tests. */
export function stagedCli(): string {
  return join(inject('stagedCliDir'), 'dist', 'cli.mjs');
}

/** Copies what the CLI loads from the checkout at `root` into a fresh directory every user can read. */
export function stageCli(root: string): Staged {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-cli-'));
  try {
    for (const path of ['dist', 'init']) cpSync(join(root, path), join(dir, path), { recursive: true });
    readableByAll(dir);
    assertReachable(dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** a+r on every file, a+rx on every directory: a checkout made under umask 077 stages readable all the same. */
function readableByAll(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  chmodSync(path, stat.mode | (stat.isDirectory() ? 0o555 : 0o444));
  if (stat.isDirectory()) for (const entry of readdirSync(path)) readableByAll(join(path, entry));
}

function assertReachable(dir: string): void {
  for (let parent = dirname(dir); ; parent = dirname(parent)) {
    if ((statSync(parent).mode & 0o001) === 0) {
      throw new Error(
        `${parent} cannot be entered by other users, so ${dir} is out of their reach: set TMPDIR`,
      );
    }
    if (dirname(parent) === parent) return;
  }
}
