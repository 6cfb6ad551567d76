// Two builds of one checkout, in two directories, write the same dist/ byte for byte: the bundles, the notices and
// serve's V8 code cache (written by a Node with a fixed --random-seed, under the path the image runs it at), so the
// image's digest depends on the commit alone (test/image/image.test.ts packs and compares whole images, as root).

import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** What the Dockerfile's build stage copies in, plus node_modules (linked). */
const SOURCES = ['package.json', 'tsconfig.json', 'scripts', 'src', 'licenses'];

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Builds a copy of the checkout in a new directory whose name has `prefix`; dist/'s files and their bytes. */
function buildCopy(prefix: string): Map<string, Buffer> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  for (const source of SOURCES) cpSync(join(ROOT, source), join(dir, source), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'pipe' });
  const dist = join(dir, 'dist');
  return new Map(
    readdirSync(dist, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const path = join(entry.parentPath, entry.name);
        return [relative(dist, path), readFileSync(path)];
      }),
  );
}

describe('the build', () => {
  it('writes the same dist/, code cache included, from two directories', () => {
    const first = buildCopy('osm-hc-build-a-');
    const second = buildCopy('osm-hc-build-second-');
    expect([...first.keys()].sort()).toEqual([...second.keys()].sort());
    expect(first.has('commands/serve.script.js.v8cache')).toBe(true);
    expect(first.has('THIRD-PARTY-NOTICES')).toBe(true);
    for (const [file, bytes] of first) expect(second.get(file)?.equals(bytes), file).toBe(true);
  }, 120_000);
});
