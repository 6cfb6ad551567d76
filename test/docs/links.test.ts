// The README is a front door to docs/: every relative link in it, in docs/*.md and in the other READMEs resolves to
// a file that exists and, with a #fragment, to a heading of that page; every page of docs/ is linked from the
// README; every docs/ page the code names (warnings, usage texts, comments) exists; and every pointer at the design
// is a live docs/architecture.md#anchor (the design lives in the repository, nowhere else).

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { anchors, links, slug } from '../helpers/markdown.js';

/** The pages of docs/: a page added or removed changes this list, and the README's links with it. */
const PAGES = [
  'admission-rules.md',
  'analyze.md',
  'architecture.md',
  'check.md',
  'companion-failures.md',
  'development.md',
  'error-codes.md',
  'image.md',
  'init.md',
  'inject.md',
  'install.md',
  'meshes.md',
  'metrics.md',
  'monitoring.md',
  'node.md',
  'pod-security.md',
  'probe-table.md',
  'resources.md',
  'security.md',
  'serve.md',
  'troubleshooting.md',
  'versions.md',
  'wait.md',
  'webhook.md',
];

const DOCS = join(ROOT, 'docs');
const MARKDOWN = [
  'README.md',
  'BENCHMARKS.md',
  'CHANGELOG.md',
  'deploy/README.md',
  'charts/osm-healthcheck/README.md',
  ...readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** What is wrong with one link of `from`, or undefined when it resolves. */
function broken(from: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: ...: not ours to check
  const [path = '', fragment] = target.split('#', 2);
  const file = path === '' ? join(ROOT, from) : join(ROOT, dirname(from), decodeURIComponent(path));
  if (!existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (fragment === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `#${fragment} on a file that is not Markdown`;
  const known = anchors(readFileSync(file, 'utf8'));
  return known.has(fragment) ? undefined : `no heading #${fragment} in ${relative(ROOT, file)}`;
}

describe('slug', () => {
  it.each([
    { name: 'words', heading: 'Install on a cluster', want: 'install-on-a-cluster' },
    { name: 'an apostrophe', heading: "Kubelet's semantics", want: 'kubelets-semantics' },
    {
      name: 'code and a colon',
      heading: '`--placement` auto: the default',
      want: '--placement-auto-the-default',
    },
    { name: 'a link', heading: 'See [the table](x.md)', want: 'see-the-table' },
    { name: 'digits and dots', heading: '1. Are the probes rewritten?', want: '1-are-the-probes-rewritten' },
    { name: 'underscores stay', heading: 'OSM_HC_USAGE', want: 'osm_hc_usage' },
  ])('$name', ({ heading, want }) => {
    expect(slug(heading)).toBe(want);
  });

  it('numbers a repeated heading as GitHub does', () => {
    expect([...anchors('# A\n## B\n```\n## not a heading\n```\n## B\n')]).toEqual(['a', 'b', 'b-1']);
  });
});

describe('links', () => {
  it('finds links in prose, not in code', () => {
    const page = 'See [a](a.md#x) and `[b](b.md)`.\n```\n[c](c.md)\n```\n[`d`](d.md)';
    expect(links(page)).toEqual([
      { line: 1, target: 'a.md#x' },
      { line: 5, target: 'd.md' },
    ]);
  });
});

describe.each(MARKDOWN)('%s', (from) => {
  it('every relative link resolves to a file, and every #fragment to a heading', () => {
    const bad = links(read(from)).flatMap(({ line, target }) => {
      const why = broken(from, target);
      return why === undefined ? [] : [`${from}:${line}: (${target}) ${why}`];
    });
    expect(bad).toEqual([]);
  });
});

describe('docs/', () => {
  it.each(PAGES)('%s exists and the README links to it', (page) => {
    expect(existsSync(join(DOCS, page)), `docs/${page}`).toBe(true);
    const targets = links(read('README.md')).map(({ target }) => target.split('#')[0]);
    expect(targets).toContain(`docs/${page}`);
  });

  it('holds the pages listed here and no other', () => {
    const present = readdirSync(DOCS).filter((name) => name.endsWith('.md'));
    expect(present.filter((name) => !PAGES.includes(name))).toEqual([]);
  });

  it('every docs/ page the code names exists', () => {
    const named = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        const path = `${dir}/${entry.name}`;
        // Git-ignored scratch (bench/.tmp holds builds with their node_modules) is no code of ours.
        if (entry.isDirectory()) {
          if (!entry.name.startsWith('.') && entry.name !== 'node_modules') walk(path);
        } else if (/\.(ts|mjs|sh|yaml)$/.test(entry.name)) {
          for (const match of read(path).matchAll(/\bdocs\/([a-z0-9-]+\.md)/g)) named.add(match[1] ?? '');
        }
      }
    };
    for (const dir of ['src', 'scripts', 'deploy', 'charts', 'bench']) walk(dir);
    for (const file of ['Dockerfile']) {
      for (const match of read(file).matchAll(/\bdocs\/([a-z0-9-]+\.md)/g)) named.add(match[1] ?? '');
    }
    expect(named.size).toBeGreaterThan(0);
    expect([...named].filter((page) => !PAGES.includes(page))).toEqual([]);
  });
});

/** Every text file of the repository a reader follows pointers from: code, tests, scripts, docs, manifests. */
function sources(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = dir === '.' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!['node_modules', 'dist', '.git'].includes(entry.name)) walk(path);
      } else if (/\.(ts|mjs|js|sh|ya?ml|md|json)$|^Dockerfile$|^run$/.test(entry.name)) found.push(path);
    }
  };
  for (const dir of [
    'src',
    'test',
    'scripts',
    'init',
    'image',
    'bench',
    'docs',
    'deploy',
    'charts',
    'examples',
    '.ci',
  ]) {
    if (existsSync(join(ROOT, dir))) walk(dir);
  }
  return [...found, 'README.md', 'BENCHMARKS.md', 'CHANGELOG.md', 'Dockerfile'].filter((path) =>
    existsSync(join(ROOT, path)),
  );
}

describe('pointers at the design', () => {
  const files = sources();
  const design = /DESIGN(\.md)?\s*§|DESIGN\.md/;
  const self = 'test/docs/links.test.ts';

  it('name no design file outside the repository (DESIGN.md)', () => {
    const bad = files
      .filter((path) => path !== self)
      .flatMap((path) =>
        read(path)
          .split('\n')
          .flatMap((text, index) => (design.test(text) ? [`${path}:${index + 1}: ${text.trim()}`] : [])),
      );
    expect(bad).toEqual([]);
  });

  it('every docs/architecture.md#anchor names a heading of that page', () => {
    const known = anchors(read('docs/architecture.md'));
    const pointers = files
      .filter((path) => path !== self)
      .flatMap((path) =>
        [...read(path).matchAll(/docs\/architecture\.md#([\w-]+)/g)].map((match) => ({
          path,
          anchor: match[1] ?? '',
        })),
      );
    expect(pointers.length).toBeGreaterThan(10);
    expect(pointers.filter(({ anchor }) => !known.has(anchor))).toEqual([]);
  });
});
