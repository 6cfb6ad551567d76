// The docs speak of the product, not of how it was made: no issue numbers, sessions, "this change" or "was 64Mi"
// in README.md, docs/, BENCHMARKS.md or the chart's README; and no issue number or design file outside the
// repository in the code, scripts and manifests either. History is CHANGELOG.md's, by version.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** Words of a page's making, each with what it looks like; case-insensitive. */
const HISTORY: { name: string; pattern: RegExp }[] = [
  { name: 'an issue number', pattern: /\bissues?\s+#?\d+/i },
  { name: "an issue's something", pattern: /\b(the|an?|this) issue'?s\b/i },
  { name: 'a session', pattern: /\b(first|second|third|earlier|last|this|the) sessions?\b|\bsession\s+\d/i },
  { name: 'a turn', pattern: /\bturn-\d/i },
  { name: 'this change or commit', pattern: /\bthis (change|commit)\b/i },
  { name: 'an old value', pattern: /\bwas \d+(\.\d+)?\s?(Mi|m|MiB|ms)\b|\bthe old (default|\d)/i },
  { name: 'main as a version', pattern: /\bfrom main\b|\bmain's (Dockerfile|tree)\b|\bbuilt from main\b/i },
];

/** The pages a user reads: README.md, BENCHMARKS.md, docs/*.md, the charts' READMEs. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  const charts = readdirSync(join(ROOT, 'charts'))
    .map((chart) => `charts/${chart}/README.md`)
    .filter((path) => existsSync(join(ROOT, path)));
  return ['README.md', 'BENCHMARKS.md', 'deploy/README.md', ...docs, ...charts];
}

/** The code, scripts and manifests a reader follows: src/, scripts/, bench/, init/, image/, deploy/, charts/. */
function sources(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const path = `${dir}/${name}`;
      if (name === '.tmp' || name === 'node_modules') return [];
      return statSync(join(ROOT, path)).isDirectory() ? walk(path) : [path];
    });
  const roots = ['src', 'scripts', 'bench', 'init', 'image', 'deploy', 'charts'];
  return [...roots.flatMap(walk), 'Dockerfile', '.ci/run'].filter((path) => !path.endsWith('.md'));
}

/** Every line of `text` that `pattern` matches, as `path:line: text`. */
function hits(path: string, pattern: RegExp): string[] {
  return readFileSync(join(ROOT, path), 'utf8')
    .split('\n')
    .flatMap((line, index) => (pattern.test(line) ? [`${path}:${index + 1}: ${line.trim()}`] : []));
}

describe('the words of history', () => {
  it.each([
    { text: 'the companion (issue 27)', want: 'an issue number' },
    { text: "every pod of the issue's table", want: "an issue's something" },
    { text: 'Second session (routes on bare node:http)', want: 'a session' },
    { text: 'the contract is being written (turn-6 issue)', want: 'a turn' },
    { text: 'the companion built from main and from this change', want: 'this change or commit' },
    { text: 'Was 64Mi (working set then 30-33 MiB)', want: 'an old value' },
    { text: '10m (the old default)', want: 'an old value' },
    { text: 'Was 10m. No CPU limit', want: 'an old value' },
  ])('$want: "$text"', ({ text, want }) => {
    expect(HISTORY.filter(({ pattern }) => pattern.test(text)).map(({ name }) => name)).toContain(want);
  });

  it.each([
    'A real run, with examples/app.mjs',
    'cert-manager issues the serving certificate',
    'kubelet was OOM-killed',
  ])('not history: "%s"', (text) => {
    expect(HISTORY.filter(({ pattern }) => pattern.test(text))).toEqual([]);
  });
});

describe.each(pages())('%s', (path) => {
  it.each(HISTORY)('has no $name', ({ pattern }) => {
    expect(hits(path, pattern)).toEqual([]);
  });
});

describe('the code, scripts and manifests', () => {
  const pointers = [
    HISTORY[0] as (typeof HISTORY)[number],
    { name: 'a design file outside the repository', pattern: /DESIGN(\.md)?\s*§|DESIGN\.md/ },
  ];
  it.each(pointers)('have no $name', ({ pattern }) => {
    expect(sources().flatMap((path) => hits(path, pattern))).toEqual([]);
  });
});
