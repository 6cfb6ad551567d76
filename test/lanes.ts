// Which test files run one at a time (the isolated lane) and which side by side (vitest.config.ts's projects),
// by a rule, not a list, so a new file lands in the right lane by what it does: a file is isolated when it, or a
// module of test/ it imports (at any depth), changes the machine for everyone or takes what is the machine's one
// of (a network namespace and its iptables, root's powers, a fixed port), as these markers say. Everything else
// uses ephemeral loopback ports, its own temp dirs and its own API server, so it runs beside anything.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** What puts a file in the isolated lane, each with why. */
export const ISOLATING: readonly { marker: RegExp; why: string }[] = [
  { marker: /['"]netns['"]/, why: 'makes or enters network namespaces, and changes iptables there' },
  {
    marker: /\broot\(/,
    why: 'needs root (test/helpers/system-tools.ts root()): namespaces, cgroups, chroot, uids',
  },
  {
    marker: /^\/\/ lane: isolated\b/m,
    why: 'says so (a `// lane: isolated` line with its reason: a fixed port)',
  },
];

/**
 * What puts a file in the lane that runs after the other two have ended, on a machine doing nothing else: a
 * `// lane: alone` line with its reason (a suite whose claim is about time under load it makes itself, which the
 * other lanes' load would blur).
 */
export const ALONE: RegExp = /^\/\/ lane: alone\b/m;

/** Where the markers are defined, not used. */
const DEFINITIONS = ['helpers/system-tools.ts', 'lanes.ts'];

function testModules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' ? [] : testModules(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The modules of test/ that `file` imports by a relative path. */
function localImports(file: string, text: string): string[] {
  return [...text.matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)].flatMap(
    ([, specifier = '']) => {
      const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
      return existsSync(target) ? [target] : [];
    },
  );
}

/** Each test file (relative to `root`) that must run alone, with the marker's reason and where it was found. */
export function isolatedFiles(root: string): Map<string, string> {
  const testDir = join(root, 'test');
  const texts = new Map(testModules(testDir).map((file) => [file, readFileSync(file, 'utf8')]));
  const own = (file: string): string | undefined => {
    if (DEFINITIONS.includes(relative(testDir, file))) return undefined;
    const text = texts.get(file) ?? '';
    return ISOLATING.find(({ marker }) => marker.test(text))?.why;
  };
  /** The first marker found, breadth first from `file` through what it imports, and where it was found. */
  const reasonOf = (file: string): string | undefined => {
    const queue = [file];
    const seen = new Set(queue);
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const why = own(next);
      if (why !== undefined) return next === file ? why : `${why} (${relative(root, next)})`;
      for (const target of localImports(next, texts.get(next) ?? '')) {
        if (!seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
    return undefined;
  };
  const isolated = new Map<string, string>();
  for (const file of texts.keys()) {
    if (!file.endsWith('.test.ts') || ALONE.test(texts.get(file) ?? '')) continue;
    const why = reasonOf(file);
    if (why !== undefined) isolated.set(relative(root, file), why);
  }
  return isolated;
}

/** The test files (relative to `root`) that run alone, after every other: those with a `// lane: alone` line. */
export function aloneFiles(root: string): string[] {
  const testDir = join(root, 'test');
  return testModules(testDir)
    .filter((file) => file.endsWith('.test.ts') && ALONE.test(readFileSync(file, 'utf8')))
    .map((file) => relative(root, file));
}
