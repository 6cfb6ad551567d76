// Usage texts and docs pages drift from the parsers when a flag is added in one place only. So, for every
// subcommand, the flags its parseFlags call accepts (read from the source, spreads of exported flag sets
// resolved) are exactly the flags its --help text lists; a synopsis that lists flags (rather than `[flags]`) lists
// every one; its docs page's synopsis lists every one; the page names every environment variable and every default
// --help names; and where the page's flag table has a default column, its value is the one --help gives. Every
// environment variable the docs name is one the code reads, and the command list is the README's.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROBES_FLAGS } from '../../src/commands/analyze-probes.js';
import type { Command } from '../../src/commands/command.js';
import { WEBHOOK_FLAGS } from '../../src/webhook/settings.js';
import { ROOT, runCli } from '../helpers/cli.js';

/** Flag sets a parseFlags call spreads in (`...WEBHOOK_FLAGS`), by the name the source gives them. */
const SPREADS: Record<string, Record<string, unknown>> = { WEBHOOK_FLAGS, PROBES_FLAGS };

/** Each subcommand: where its parseFlags call is, and its Command. */
const COMMANDS: { name: string; parser: string; load: () => Promise<Command> }[] = [
  {
    name: 'serve',
    parser: 'src/commands/serve.ts',
    load: async () => (await import('../../src/commands/serve.js')).serveCommand,
  },
  {
    name: 'wait',
    parser: 'src/commands/wait.ts',
    load: async () => (await import('../../src/commands/wait.js')).waitCommand,
  },
  {
    name: 'inject',
    parser: 'src/commands/inject.ts',
    load: async () => (await import('../../src/commands/inject.js')).injectCommand,
  },
  {
    name: 'init',
    parser: 'src/init/options.ts',
    load: async () => (await import('../../src/commands/init.js')).initCommand,
  },
  {
    name: 'node',
    parser: 'src/node/options.ts',
    load: async () => (await import('../../src/commands/node.js')).nodeCommand,
  },
  {
    name: 'webhook',
    parser: 'src/webhook/settings.ts',
    load: async () => (await import('../../src/commands/webhook.js')).webhookCommand,
  },
  {
    name: 'check',
    parser: 'src/commands/check.ts',
    load: async () => (await import('../../src/commands/check.js')).checkCommand,
  },
  {
    name: 'analyze',
    parser: 'src/commands/analyze.ts',
    load: async () => (await import('../../src/commands/analyze.js')).analyzeCommand,
  },
];

interface Flag {
  name: string;
  /** Its one-letter form (`-f`), when it has one. */
  short?: string;
}

/** The flags of the options object passed to `parseFlags('<command>', argv, { ... })` in `source`. */
function parsedFlags(source: string, command: string): Flag[] {
  const start = source.indexOf(`parseFlags('${command}', argv, {`);
  if (start === -1) throw new Error(`no parseFlags('${command}', argv, {...}) call`);
  const open = source.indexOf('{', start);
  let depth = 0;
  let end = open;
  for (; end < source.length; end++) {
    if (source[end] === '{') depth++;
    if (source[end] === '}' && --depth === 0) break;
  }
  const body = source.slice(open + 1, end);
  // A flag's own settings hold no braces, so `key: { ... }` matches the options object's keys only.
  const flags: Flag[] = [
    ...body.matchAll(/(?:'([a-z][a-z0-9-]*)'|\b([a-z][a-zA-Z0-9]*))\s*:\s*\{([^{}]*)\}/g),
  ].map((match) => {
    const short = /short:\s*'([a-zA-Z])'/.exec(match[3] ?? '')?.[1];
    return { name: match[1] ?? match[2] ?? '', ...(short === undefined ? {} : { short }) };
  });
  for (const match of body.matchAll(/\.\.\.([A-Z_]+)/g)) {
    const spread = SPREADS[match[1] ?? ''];
    if (spread === undefined) throw new Error(`${command}: spread ...${match[1]} is not in SPREADS`);
    flags.push(...Object.keys(spread).map((name) => ({ name })));
  }
  return flags.sort((a, b) => a.name.localeCompare(b.name));
}

/** The long flags a --help text's flag list gives, one a line: `  --ports LIST  ...`, `  -f, --filename FILE`. */
function listed(usage: string): string[] {
  const names = usage.split('\n').flatMap((line) => {
    const name = /^\s+(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)/.exec(line)?.[1];
    return name === undefined ? [] : [name];
  });
  return names.filter((name) => !['help', 'version'].includes(name)).sort();
}

/** The flags of `flags` that `synopsis` names in neither form. */
function missing(synopsis: string, flags: Flag[]): string[] {
  const has = (form: string) => new RegExp(`(?<![\\w-])${form}(?![\\w-])`).test(synopsis);
  return flags
    .filter(({ name, short }) => !has(`--${name}`) && (short === undefined || !has(`-${short}`)))
    .map(({ name }) => name);
}

/** Every `--flag` a text names. */
function named(text: string): string[] {
  return [...new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1] ?? ''))].sort();
}

/** The synopsis of a docs page: the `osm-healthcheck <name> [...]` line of a code block and its continuations. */
function docsSynopsis(page: string, name: string): string {
  const lines = page.split('\n');
  const first = lines.findIndex((line) => line.startsWith(`osm-healthcheck ${name} [`));
  if (first === -1) return '';
  const rest = lines.slice(first + 1);
  const end = rest.findIndex((line) => !/^\s+\[/.test(line));
  return [lines[first], ...rest.slice(0, end === -1 ? rest.length : end)].join('\n');
}

/** Each flag's entry in a --help text: its line and the lines under it, up to the next flag or a blank line. */
function entries(usage: string): Map<string, string> {
  const found = new Map<string, string>();
  let current: string | undefined;
  for (const line of usage.split('\n')) {
    const name = /^\s+(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)/.exec(line)?.[1];
    if (name !== undefined) current = name;
    else if (line.trim() === '') current = undefined;
    if (current !== undefined) found.set(current, `${found.get(current) ?? ''}${line}\n`);
  }
  return found;
}

/** The defaults an entry of --help gives: `default 30`, `default :: and ...`, `yaml (default)`. */
function defaults(entry: string): string[] {
  const text = entry.replace(/\s+/g, ' ');
  return [
    ...[...text.matchAll(/(?<![\w-])default ([^\s;)]+)/g)].map((m) => m[1] ?? ''),
    ...[...text.matchAll(/(\S+) \(default\)/g)].map((m) => m[1] ?? ''),
  ].map((value) => value.replace(/[,.:]$/, ''));
}

/** The rows of the page's flag table that has a `default` column: the flag and the default cell. */
function defaultCells(page: string): { flag: string; cell: string }[] {
  const rows: { flag: string; cell: string }[] = [];
  let column = -1;
  for (const line of page.split('\n')) {
    if (!line.startsWith('|')) {
      column = -1;
      continue;
    }
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells[0] === 'flag') column = cells.indexOf('default');
    const flag = /^`(?:-[a-zA-Z]`, `)?--([a-z][a-z0-9-]*)/.exec(cells[0] ?? '')?.[1];
    if (column > 0 && flag !== undefined) rows.push({ flag, cell: cells[column] ?? '' });
  }
  return rows;
}

describe('parsedFlags', () => {
  it('reads the keys, short forms and spreads of the options object, not nested fields', () => {
    const source = `parseFlags('x', argv, {\n  ...WEBHOOK_FLAGS,\n  port: { type: 'string' },\n  'dry-run': { type: 'boolean', default: false },\n  output: { type: 'string', short: 'o' },\n});`;
    expect(parsedFlags(source, 'x')).toEqual(
      [
        ...Object.keys(WEBHOOK_FLAGS).map((name) => ({ name })),
        { name: 'dry-run' },
        { name: 'output', short: 'o' },
        { name: 'port' },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
  });
});

describe('environment variables in the docs', () => {
  /** Every file under `dir`, recursively. */
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));

  it('every OSM_HEALTHCHECK_* variable the README, docs/ and the READMEs name is one the code or image reads', () => {
    const pages = ['README.md', 'deploy/README.md', 'charts/osm-healthcheck/README.md']
      .map((page) => join(ROOT, page))
      .concat(files('docs').filter((file) => file.endsWith('.md')));
    const named = new Set(
      pages.flatMap((page) => readFileSync(page, 'utf8').match(/\bOSM_HEALTHCHECK_[A-Z_]+\b/g) ?? []),
    );
    const code = ['src', 'image', 'init', 'deploy', 'charts']
      .flatMap(files)
      .map((file) => readFileSync(file, 'utf8'));
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((name) => !code.some((text) => new RegExp(`\\b${name}\\b`).test(text)))).toEqual(
      [],
    );
  });
});

describe('osm-healthcheck --help', () => {
  it("lists exactly the commands checked here and the README's table of subcommands, each linked to its page", async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    const listed = [...stdout.matchAll(/^ {2}([a-z]+) {2,}\S/gm)].map((m) => m[1]).sort();
    expect(listed).toEqual(COMMANDS.map((c) => c.name).sort());
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = [...readme.matchAll(/^\| \[`([a-z]+)`\]\(docs\/([a-z-]+)\.md\) \|/gm)];
    expect(table.map((m) => m[1]).sort()).toEqual(listed);
    expect(table.filter((m) => m[1] !== m[2]).map((m) => m[0])).toEqual([]);
  });
});

describe.each(COMMANDS)('$name', ({ name, parser, load }) => {
  const accepted = parsedFlags(readFileSync(join(ROOT, parser), 'utf8'), name);
  const names = accepted.map((flag) => flag.name);

  it('--help lists exactly the flags the parser accepts', async () => {
    expect(listed((await load()).usage)).toEqual(names);
  });

  it('a --help synopsis that lists flags (not `[flags]`) lists every one, and only those', async () => {
    const { usage } = await load();
    const synopsis = usage.slice(0, usage.indexOf('\n\n'));
    if (synopsis.includes('[flags]')) return;
    expect(missing(synopsis, accepted)).toEqual([]);
    expect(named(synopsis).filter((flag) => !names.includes(flag))).toEqual([]);
  });

  it(`docs/${name}.md's synopsis lists every flag, and only those`, () => {
    const synopsis = docsSynopsis(readFileSync(join(ROOT, 'docs', `${name}.md`), 'utf8'), name);
    expect(synopsis).not.toBe('');
    expect(missing(synopsis, accepted)).toEqual([]);
    expect(named(synopsis).filter((flag) => !names.includes(flag))).toEqual([]);
  });

  it(`docs/${name}.md names every environment variable --help names`, async () => {
    const { usage } = await load();
    const page = readFileSync(join(ROOT, 'docs', `${name}.md`), 'utf8');
    const envs = [...new Set([...usage.matchAll(/\bOSM_HEALTHCHECK_[A-Z_]+/g)].map((m) => m[0]))];
    expect(envs.filter((env) => !page.includes(env))).toEqual([]);
  });

  it(`docs/${name}.md names every default --help gives`, async () => {
    const { usage } = await load();
    const page = readFileSync(join(ROOT, 'docs', `${name}.md`), 'utf8');
    const given = [...entries(usage)].flatMap(([flag, entry]) =>
      defaults(entry).map((value) => `--${flag}: ${value}`),
    );
    expect(given.filter((item) => !page.includes(item.slice(item.indexOf(': ') + 2)))).toEqual([]);
  });

  it(`docs/${name}.md's flag table gives each flag the default --help gives`, async () => {
    const help = entries((await load()).usage);
    const page = readFileSync(join(ROOT, 'docs', `${name}.md`), 'utf8');
    const wrong = defaultCells(page).flatMap(({ flag, cell }) => {
      // The cell's own value is its leading code span (`30`; `::` (dual stack) ...); prose cells state no value.
      const value = /^`([^`]+)`/.exec(cell)?.[1];
      if (value === undefined) return [];
      return (help.get(flag) ?? '').includes(value) ? [] : [`--${flag}: the page says ${value}`];
    });
    expect(wrong).toEqual([]);
  });
});
