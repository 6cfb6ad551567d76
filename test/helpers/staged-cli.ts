// The built CLI as the image lays it out (dist/, init/, package.json and the node_modules it loads at run time),
// copied into a temporary directory every user can read. Tests that run it as another uid (the companion's 65532,
// nobody's 65534) could not read a checkout under a 0700 home or `mktemp -d`. vitest's global setup stages it once
// per run and removes it afterwards; tests ask for it with stagedCli().

import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { inject } from 'vitest';
import { common } from '../../scripts/bundle-options.mjs';

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
    for (const path of ['dist', 'init', 'package.json'])
      cpSync(join(root, path), join(dir, path), { recursive: true });
    for (const pkg of runtimePackages(root)) {
      const rel = relative(root, pkg);
      // Without its nested node_modules: the nested packages it needs are in the list themselves.
      cpSync(pkg, join(dir, rel), {
        recursive: true,
        filter: (src) => !relative(pkg, src).split(sep).includes('node_modules'),
      });
    }
    readableByAll(dir);
    assertReachable(dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The packages the bundles leave external (scripts/bundle-options.mjs), and all they depend on, as directories. */
function runtimePackages(root: string): string[] {
  const externals = common.external;
  const found = new Set<string>();
  const visit = (pkg: string) => {
    if (found.has(pkg)) return;
    found.add(pkg);
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      const resolved = resolvePackage(root, pkg, name);
      if (resolved !== undefined) visit(resolved);
      else if (manifest.dependencies?.[name] !== undefined)
        throw new Error(`${pkg} needs ${name}, not installed`);
    }
  };
  for (const name of externals) {
    const resolved = resolvePackage(root, root, name);
    if (resolved === undefined) throw new Error(`${name} is not installed under ${root}; run npm ci`);
    visit(resolved);
  }
  return [...found];
}

/** Node's lookup: `<dir>/node_modules/<name>` from `from` upwards, no higher than `root`. */
function resolvePackage(root: string, from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
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
