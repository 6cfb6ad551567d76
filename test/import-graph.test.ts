// The import graph of src/: no cycles (type-only and lazy imports count too: a cycle of types is still two
// rooms leaning on each other), the layering cli.ts -> commands/ -> everything else, never upwards, and rooms
// that stand side by side (rewrite/ and server/) sharing only what sits below both. Read with the TypeScript
// compiler's own pre-processor, so every import form tsc sees is seen here.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

type Graph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `./x.js` from src/a/b.ts -> `a/x.ts`; undefined for a package or node: import. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = resolve(dirname(from), specifier).replace(/\.js$/, '.ts');
  const file = existsSync(target) ? target : join(target, 'index.ts');
  if (!existsSync(file)) throw new Error(`${relative(SRC, from)}: cannot resolve import "${specifier}"`);
  return relative(SRC, file);
}

/** Every src file (relative to src/) -> the src files it imports, in source order. */
function importGraph(): Graph {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles.flatMap(({ fileName }) => resolveImport(file, fileName) ?? []);
    graph.set(relative(SRC, file), [...new Set(targets)]);
  }
  return graph;
}

/** Each cycle once, as the path that closes it: `['a.ts', 'b.ts', 'a.ts']`. Depth-first, back edges. */
function findCycles(graph: Graph): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const seen = state.get(next);
      if (seen === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

const isCommandLayer = (file: string) =>
  file === 'cli.ts' || file === 'dispatch.ts' || file.startsWith('commands/');

/**
 * The rooms src/kube/ (Kubernetes' own arithmetic, and kube/api/: the one client of the API server) sits below: it
 * may import none of them.
 */
const ABOVE_KUBE = ['rewrite/', 'cluster/', 'webhook/', 'analyze/', 'server/', 'commands/'];

/**
 * The files that may open an HTTP(S) request of their own, each for a peer that is no API server: the probes (the
 * app), the companion's GET (wait, check) and Prometheus. Every request to the API server goes through kube/api/.
 */
const OWN_REQUESTS = ['analyze/probes/prometheus-client.ts', 'bounded-get.ts', 'probe/http.ts'];

/** The rooms src/cluster/ (what is known of a cluster, for a rewrite) sits below: the webhook and analyze share it. */
const ABOVE_CLUSTER = ['webhook/', 'analyze/', 'server/', 'commands/'];

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('keeps cluster/ (the view of the cluster and its readers) below the webhook and analyze, which share it', () => {
    const cluster = [...graph].filter(([file]) => file.startsWith('cluster/'));
    expect(cluster.map(([file]) => file)).toEqual(expect.arrayContaining(['cluster/view.ts']));
    const upwards = cluster.flatMap(([file, targets]) =>
      targets
        .filter((target) => ABOVE_CLUSTER.some((room) => target.startsWith(room)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upwards).toEqual([]);
    // analyze takes from webhook/ only the webhook's own words: its flags, its warnings' prefix, and the annotation
    // it publishes its serving certificate in.
    const fromWebhook = [...graph].flatMap(([file, targets]) =>
      file.startsWith('analyze/') ? targets.filter((target) => target.startsWith('webhook/')) : [],
    );
    expect([...new Set(fromWebhook)].sort()).toEqual([
      'webhook/admit.ts',
      'webhook/settings.ts',
      'webhook/tls/published-cert.ts',
    ]);
  });

  it('is read: every room is there, with its imports', () => {
    expect(graph.get('init/options.ts')).toContain('flags.ts');
    expect(graph.get('cli.ts')).toEqual(['dispatch.ts']);
    expect(graph.get('dispatch.ts')).toContain('commands/wait.ts');
    expect(graph.size).toBeGreaterThan(50);
  });

  it('has no cycle', () => {
    expect(findCycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('points down only: nothing below commands/ imports a command or cli.ts', () => {
    const upwards = [...graph].flatMap(([file, targets]) =>
      isCommandLayer(file) ? [] : targets.filter(isCommandLayer).map((target) => `${file} -> ${target}`),
    );
    expect(upwards).toEqual([]);
    expect([...graph].filter(([, targets]) => targets.includes('cli.ts')).map(([file]) => file)).toEqual([]);
  });

  it('has one way to the API server: kube/api/, whose kubeconfig reader alone takes client-node', () => {
    const requesters = sourceFiles(SRC)
      .filter((file) => !relative(SRC, file).startsWith('kube/api/') && opensRequests(file))
      .map((file) => relative(SRC, file));
    expect(requesters.sort()).toEqual(OWN_REQUESTS);
    const clientNode = sourceFiles(SRC).filter((file) =>
      readFileSync(file, 'utf8').includes("from '@kubernetes/client-node"),
    );
    expect(clientNode.map((file) => relative(SRC, file))).toEqual(['kube/api/kubeconfig.ts']);
    expect([...graph.keys()]).toEqual(expect.arrayContaining(['kube/api/transport.ts', 'kube/api/watch.ts']));
  });

  it("keeps kube/ (quantities, a pod's resources as the API server adds them) below rewrite/, webhook/, server/ and commands/", () => {
    const kube = [...graph].filter(([file]) => file.startsWith('kube/'));
    expect(kube.map(([file]) => file)).toEqual(
      expect.arrayContaining(['kube/quantity.ts', 'kube/pod-resources.ts']),
    );
    const upwards = kube.flatMap(([file, targets]) =>
      targets
        .filter((target) => ABOVE_KUBE.some((room) => target.startsWith(room)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upwards).toEqual([]);
  });
});

/** Whether `file` imports what opens a request (node:http(s)'s request or get, node:http2's connect), or all of it. */
function opensRequests(file: string): boolean {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  return source.statements.some((statement) => {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) return false;
    if (!/^node:(https?|http2)$/.test(statement.moduleSpecifier.text)) return false;
    const bindings = statement.importClause?.namedBindings;
    if (bindings === undefined || ts.isNamespaceImport(bindings)) return true;
    return bindings.elements.some((element) =>
      ['request', 'get', 'connect'].includes((element.propertyName ?? element.name).text),
    );
  });
}

/** The one thing rewrite/ may take from the yaml library: parsing an annotation's value (Kuma's YAML config). */
const REWRITE_YAML_IMPORTS = ['parse'];

/** What each src file imports by name from the yaml package: `['parse']`, `['* as yaml']`, `['default']`. */
function yamlImports(): ReadonlyMap<string, readonly string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    const names: string[] = [];
    const note = (specifier: ts.Expression, clause: ts.ImportClause | undefined) => {
      if (!ts.isStringLiteral(specifier) || specifier.text !== 'yaml') return;
      if (clause === undefined) return void names.push('(side effects)');
      if (clause.name !== undefined) names.push('default');
      const bindings = clause.namedBindings;
      if (bindings !== undefined && ts.isNamespaceImport(bindings)) names.push(`* as ${bindings.name.text}`);
      if (bindings !== undefined && ts.isNamedImports(bindings))
        for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node)) note(node.moduleSpecifier, node.importClause);
      else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined)
        note(node.moduleSpecifier, ts.factory.createImportClause(false, undefined, undefined));
      else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [specifier] = node.arguments;
        if (specifier !== undefined && ts.isStringLiteral(specifier) && specifier.text === 'yaml')
          names.push('import()');
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    if (names.length > 0) found.set(relative(SRC, file), names);
  }
  return found;
}

describe("the YAML stream's room, manifest/, and the pod rules', rewrite/", () => {
  const graph = importGraph();

  it('rewrite/ takes only parse from the yaml library, none of its document machinery', () => {
    const taken = [...yamlImports()].flatMap(([file, names]) =>
      file.startsWith('rewrite/')
        ? names.filter((name) => !REWRITE_YAML_IMPORTS.includes(name)).map((name) => `${file}: ${name}`)
        : [],
    );
    expect(taken).toEqual([]);
  });

  it('sees the yaml imports: manifest/ reads with the document machinery, rewrite/mesh/ parses an annotation', () => {
    const imports = yamlImports();
    expect(imports.get('manifest/read-stream.ts')).toEqual(expect.arrayContaining(['Composer', 'Parser']));
    expect(imports.get('rewrite/mesh/recognise.ts')).toEqual(['parse']);
  });

  it('stands between commands/ and rewrite/: only commands/ imports manifest/, and manifest/ no command', () => {
    const into = [...graph].flatMap(([file, targets]) =>
      file.startsWith('manifest/') || isCommandLayer(file)
        ? []
        : targets.filter((target) => target.startsWith('manifest/')).map((target) => `${file} -> ${target}`),
    );
    expect(into).toEqual([]);
    expect(graph.get('commands/inject.ts')).toContain('manifest/inject.ts');
    expect(graph.get('manifest/document.ts')).toContain('rewrite/pod.ts');
  });
});

describe('findCycles', () => {
  it.each([
    { name: 'none in a chain', graph: { a: ['b'], b: ['c'], c: [] }, cycles: [] },
    { name: 'two files', graph: { a: ['b'], b: ['a'], c: ['a'] }, cycles: [['a', 'b', 'a']] },
    { name: 'a file importing itself', graph: { a: ['a'] }, cycles: [['a', 'a']] },
    { name: 'three files', graph: { a: ['b'], b: ['c'], c: ['a'] }, cycles: [['a', 'b', 'c', 'a']] },
    { name: 'a diamond is no cycle', graph: { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, cycles: [] },
  ])('$name', ({ graph, cycles }) => {
    expect(findCycles(new Map(Object.entries(graph)))).toEqual(cycles);
  });
});

/**
 * Rooms that never import each other: what both speak (the probe scheme in scheme.ts, osm-edge's Original-*
 * headers in original-headers.ts) lives below both, in src/.
 */
const SIDE_BY_SIDE: readonly (readonly [string, string])[] = [['rewrite/', 'server/']];

/** `a -> b` for each import from one room of a side-by-side pair into the other. */
function reachesAcross(graph: Graph, pairs: readonly (readonly [string, string])[]): string[] {
  return [...graph].flatMap(([file, targets]) =>
    pairs.flatMap(([one, other]) => {
      const across = file.startsWith(one) ? other : file.startsWith(other) ? one : undefined;
      return across === undefined
        ? []
        : targets.filter((target) => target.startsWith(across)).map((target) => `${file} -> ${target}`);
    }),
  );
}

describe('the rooms of src/', () => {
  const graph = importGraph();

  it.each(SIDE_BY_SIDE)('keeps %s and %s apart: neither imports the other', (one, other) => {
    expect(reachesAcross(graph, [[one, other]])).toEqual([]);
  });

  it('sees both rooms, and what they share below them', () => {
    expect(graph.get('rewrite/original-target.ts')).toContain('original-headers.ts');
    expect(graph.get('server/healthcheck-route.ts')).toContain('original-headers.ts');
  });
});

describe('reachesAcross', () => {
  const pair = [['rewrite/', 'server/']] as const;
  it.each([
    { name: 'apart', graph: { 'rewrite/a.ts': ['scheme.ts'], 'server/b.ts': ['scheme.ts'] }, across: [] },
    {
      name: 'rewrite/ into server/',
      graph: { 'rewrite/a.ts': ['server/b.ts'], 'server/b.ts': [] },
      across: ['rewrite/a.ts -> server/b.ts'],
    },
    {
      name: 'server/ into rewrite/',
      graph: { 'server/b.ts': ['rewrite/a.ts'], 'rewrite/a.ts': [] },
      across: ['server/b.ts -> rewrite/a.ts'],
    },
    { name: 'within one room', graph: { 'server/a.ts': ['server/b.ts'], 'server/b.ts': [] }, across: [] },
    {
      name: 'a third room may import both',
      graph: { 'commands/serve.ts': ['server/a.ts', 'rewrite/b.ts'] },
      across: [],
    },
    { name: 'a name that only starts alike', graph: { 'rewrite-x.ts': ['server/a.ts'] }, across: [] },
  ])('$name', ({ graph, across }) => {
    expect(reachesAcross(new Map(Object.entries(graph)), pair)).toEqual(across);
  });
});
