// buildNode, BuiltMap, BuiltSeq: the nodes inject builds print exactly as yaml's createNode's nodes would,
// whether their text is printed afresh or reused from the cache, and whatever was done to them since.

import { describe, expect, it, vi } from 'vitest';
import {
  type Document,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Node,
  Pair,
  parseDocument,
  Scalar,
  type ToStringOptions,
  YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { BUILT_TEXTS, BuiltMap, BuiltSeq, buildNode } from '../../src/manifest/built-nodes.js';

interface PrintOptions {
  indent: number;
  indentSeq: boolean;
  lineWidth: number;
}

const PRINT_OPTIONS: PrintOptions[] = [2, 4].flatMap((indent) =>
  [true, false].flatMap((indentSeq) => [0, 80].map((lineWidth) => ({ indent, indentSeq, lineWidth }))),
);

/** The document as printDocument prints it: with a fresh BuiltTexts, so built nodes use the text cache. */
function cachedPrint(doc: Document, options: Partial<PrintOptions> = {}): string {
  return doc.toString({ ...options, [BUILT_TEXTS]: { keys: new WeakMap() } } as ToStringOptions);
}

/** buildNode where it builds, createNode where it does not (as sync.ts's newNode). */
function built(doc: Document, value: unknown): Node {
  return buildNode(doc.schema, value) ?? (doc.createNode(value) as Node);
}

/** Puts a node for `value` under a map key and as the last item of a block list. */
function placed(value: unknown, make: (doc: Document, value: unknown) => Node): Document {
  const doc = parseDocument('a:\n  b: 1\nl:\n  - 1\n');
  doc.setIn(['a', 'c'], make(doc, value));
  (doc.get('l') as YAMLSeq).items.push(make(doc, value));
  return doc;
}

const created = (doc: Document, value: unknown): Node => doc.createNode(value) as Node;

const SHARED = { x: 1, y: ['z'] };
const LONG = 'abc '.repeat(40).trim();

const VALUES: { name: string; value: unknown }[] = [
  {
    name: 'nested objects and lists',
    value: { a: { b: [1, 'x', { c: null }] }, d: [[1, 2], [], [{ e: 'f' }]], g: {} },
  },
  {
    name: 'strings that must be quoted, as list items',
    value: [
      'true',
      '1',
      '',
      'a: b',
      '- x',
      '#c',
      ' lead',
      'null',
      '~',
      'yes',
      '0x1f',
      '1e3',
      'x #y',
      'trail ',
    ],
  },
  {
    name: 'strings that must be quoted, as map values',
    value: {
      t: 'true',
      one: '1',
      empty: '',
      colon: 'a: b',
      dash: '- x',
      hash: '#c',
      lead: ' lead',
      nul: 'null',
    },
  },
  {
    name: 'keys that must be quoted',
    value: { 'a: b': 1, '1': 2, true: 3, '': 4, '- x': 5, null: 6, '~': 7 },
  },
  { name: 'numbers', value: [0, 1.5, 1e21, -3, 0.1, 123456789] },
  { name: 'booleans and null', value: { t: true, f: false, n: null, l: [true, false, null] } },
  { name: 'a string with a newline', value: { s: 'a\nb\n', t: 'x\ny', l: ['p\nq', 'r'] } },
  { name: 'NaN, Infinity, -0', value: [NaN, Infinity, -Infinity, -0, { n: NaN, z: -0 }] },
  { name: 'an object holding the same sub-object twice', value: { a: SHARED, b: SHARED } },
  { name: 'a long string, folded where lines are limited', value: { s: LONG, l: [LONG, { t: LONG }] } },
  { name: 'undefined entries are left out', value: { a: 1, u: undefined, m: { v: undefined, w: 2 } } },
  { name: 'an own __proto__ key', value: JSON.parse('{"__proto__": {"x": 1}, "a": [1]}') },
  { name: 'an empty map and an empty list', value: { m: {}, l: [], n: [{}, []] } },
  { name: 'a list of lists', value: [[1, [2, [3]]], [{ a: [4] }]] },
  { name: 'a string scalar', value: 'true' },
  { name: 'a number scalar', value: 42 },
];

describe('buildNode: printed as createNode’s node prints, afresh and from the cache', () => {
  it.each(VALUES.flatMap((row) => PRINT_OPTIONS.map((options) => ({ ...row, ...options }))))(
    '$name (indent $indent, indentSeq $indentSeq, lineWidth $lineWidth)',
    ({ value, ...options }) => {
      const expected = placed(value, created).toString(options);
      const doc = placed(value, built);
      const first = cachedPrint(doc, options);
      const second = cachedPrint(doc, options);
      expect(first).toBe(expected);
      expect(second).toBe(expected);
      // A document built afresh from the same value: its nodes' texts come from the cache.
      expect(cachedPrint(placed(value, built), options)).toBe(expected);
    },
  );

  it.each([
    { lineWidth: 0, printed: 1 },
    // Folded lines break by what stands before the node on its line: printed afresh each time.
    { lineWidth: 80, printed: 2 },
  ])(
    'a second print at lineWidth $lineWidth prints the built map $printed time(s) in all',
    ({ lineWidth, printed }) => {
      const doc = parseDocument('a:\n  b: 1\n');
      const node = buildNode(doc.schema, { probe: `cache hit at ${lineWidth}`, list: [1, 2] });
      doc.setIn(['a', 'c'], node);
      const spy = vi.spyOn(YAMLMap.prototype, 'toString');
      try {
        const first = cachedPrint(doc, { lineWidth });
        expect(spy.mock.contexts.filter((self) => self === node)).toHaveLength(1);
        expect(cachedPrint(doc, { lineWidth })).toBe(first);
        expect(spy.mock.contexts.filter((self) => self === node)).toHaveLength(printed);
      } finally {
        spy.mockRestore();
      }
    },
  );

  it.each([
    { indent: 2, indentSeq: true },
    { indent: 2, indentSeq: false },
    { indent: 4, indentSeq: true },
    { indent: 4, indentSeq: false },
  ])(
    'one value at several indentations in one document (indent $indent, indentSeq $indentSeq)',
    (options) => {
      const value = { x: [1, { y: 'two', z: [3] }], w: { v: 'true' } };
      const source = 'top:\n  deep:\n    deeper:\n      z: 0\nlist:\n  - - 1\n';
      const place = (make: (doc: Document, value: unknown) => Node): Document => {
        const doc = parseDocument(source);
        doc.setIn(['top', 'n'], make(doc, value));
        doc.setIn(['top', 'deep', 'n'], make(doc, value));
        doc.setIn(['top', 'deep', 'deeper', 'n'], make(doc, value));
        (doc.get('list') as YAMLSeq).items.push(make(doc, value));
        ((doc.get('list') as YAMLSeq).items[0] as YAMLSeq).items.push(make(doc, value));
        doc.set('root', make(doc, value));
        return doc;
      };
      const expected = place(created).toString(options);
      const doc = place(built);
      expect(cachedPrint(doc, options)).toBe(expected);
      expect(cachedPrint(doc, options)).toBe(expected);
    },
  );

  it.each([
    { name: '"1" and 1', one: '1', other: 1 },
    { name: '"true" and true', one: 'true', other: true },
    { name: '"null" and null', one: 'null', other: null },
    { name: '"" and null', one: '', other: null },
    { name: '"1.5" and 1.5', one: '1.5', other: 1.5 },
    { name: '"false" and false', one: 'false', other: false },
  ])('values that differ only by type never share a text: $name', ({ one, other }) => {
    const values = [
      { v: one },
      { v: other },
      [one],
      [other],
      { l: [one, { w: one }] },
      { l: [other, { w: other }] },
    ];
    for (const materialize of [false, true]) {
      for (const value of values) {
        const expected = placed(value, created).toString();
        const doc = placed(value, (doc, value) => {
          const node = built(doc, value);
          // A node whose items were read is keyed by its nodes, not by its JSON.
          if (materialize && (isMap(node) || isSeq(node))) void node.items;
          return node;
        });
        expect(cachedPrint(doc)).toBe(expected);
      }
    }
    // Both in one document, at the same indentation.
    const both = (make: (doc: Document, value: unknown) => Node): Document => {
      const doc = parseDocument('a: 1\n');
      doc.set('one', make(doc, { v: one }));
      doc.set('other', make(doc, { v: other }));
      return doc;
    };
    const expected = both(created).toString();
    expect(cachedPrint(both(built))).toBe(expected);
    expect(expected).toContain(`v: ${JSON.stringify(one)}`);
  });
});

describe('buildNode: what else changes a text is part of its key', () => {
  const VALUE = { s: ['yes', 'x-1', 'a b', 'it’s', ''], n: null, t: true, m: { k: 'v' }, e: [] };
  it.each<{ name: string; options: ToStringOptions }>([
    { name: 'defaultStringType QUOTE_DOUBLE', options: { defaultStringType: 'QUOTE_DOUBLE' } },
    { name: 'defaultStringType QUOTE_SINGLE', options: { defaultStringType: 'QUOTE_SINGLE' } },
    { name: 'singleQuote', options: { singleQuote: true } },
    { name: 'nullStr, trueStr', options: { nullStr: '~', trueStr: 'yes' } },
    { name: 'collectionStyle flow', options: { collectionStyle: 'flow' } },
    { name: 'collectionStyle block', options: { collectionStyle: 'block' } },
    { name: 'flowCollectionPadding off', options: { flowCollectionPadding: false } },
    { name: 'indent 3', options: { indent: 3 } },
    { name: 'the same options again', options: {} },
  ])('$name', ({ options }) => {
    // Printed with yaml's defaults first, so a text keyed without these options would be found.
    expect(cachedPrint(placed(VALUE, built))).toBe(placed(VALUE, created).toString());
    const expected = placed(VALUE, created).toString(options);
    expect(cachedPrint(placed(VALUE, built), options as Partial<PrintOptions>)).toBe(expected);
    expect(cachedPrint(placed(VALUE, built), options as Partial<PrintOptions>)).toBe(expected);
  });

  it.each([
    { name: 'YAML 1.1', options: { version: '1.1' as const } },
    {
      name: 'a custom tag for strings like x-1',
      options: {
        customTags: [
          {
            tag: '!x',
            default: true,
            test: /^x-[0-9]+$/,
            resolve: (source: string) => source,
          },
        ],
      },
    },
  ])('the schema: $name', ({ options }) => {
    const into = (make: (doc: Document, value: unknown) => Node, parse = {}): Document => {
      const doc = parseDocument('a: 1\nl:\n  - 1\n', parse);
      doc.set('c', make(doc, VALUE));
      (doc.get('l') as YAMLSeq).items.push(make(doc, VALUE));
      return doc;
    };
    expect(cachedPrint(into(built))).toBe(into(created).toString());
    expect(cachedPrint(into(built, options))).toBe(into(created, options).toString());
  });
});

describe('buildNode: a built node where it prints otherwise than as a block value', () => {
  const VALUE = { k: [1, 'a b'], m: { n: 'true' } };
  it.each([
    {
      name: 'as a key',
      put: (doc: Document, node: Node) => (doc.contents as YAMLMap).items.push(new Pair(node, new Scalar(1))),
    },
    {
      name: 'as a key without a value',
      put: (doc: Document, node: Node) => (doc.contents as YAMLMap).items.push(new Pair(node, null)),
    },
    {
      name: 'in a flow map',
      put: (doc: Document, node: Node) => (doc.get('f') as YAMLMap).set('c', node),
    },
    {
      name: 'in a flow list',
      put: (doc: Document, node: Node) => (doc.get('g') as YAMLSeq).items.push(node),
    },
    {
      name: 'at the top of a document',
      put: (doc: Document, node: Node) => {
        doc.contents = node as typeof doc.contents;
      },
    },
  ])('$name', ({ put }) => {
    const into = (make: (doc: Document, value: unknown) => Node): Document => {
      const doc = parseDocument('a: 1\nf: {x: 1}\ng: [1]\n');
      put(doc, make(doc, VALUE));
      return doc;
    };
    // The text of the block value, printed at the same indentation before.
    const block = (make: (doc: Document, value: unknown) => Node): Document => {
      const doc = parseDocument('a: 1\n');
      doc.set('b', make(doc, VALUE));
      return doc;
    };
    expect(cachedPrint(block(built))).toBe(block(created).toString());
    expect(cachedPrint(into(built))).toBe(into(created).toString());
    expect(cachedPrint(into(built))).toBe(into(created).toString());
  });
});

describe('buildNode: a built node changed after a print prints its change', () => {
  const VALUE = { x: 1, y: [1, 2], z: { w: 'q' } };
  const entryOf = (map: YAMLMap, key: string) => map.get(key, true) as Node;
  it.each([
    { name: 'set an existing key', change: (node: YAMLMap) => node.set('x', 2) },
    { name: 'set a new key', change: (node: YAMLMap) => node.set('added', 'v') },
    { name: 'delete a key', change: (node: YAMLMap) => node.delete('x') },
    {
      name: 'replace a pair’s value',
      change: (node: YAMLMap) => {
        (node.items[0] as Pair).value = new Scalar(9);
      },
    },
    {
      name: 'rename a key',
      change: (node: YAMLMap) => {
        ((node.items[0] as Pair).key as Scalar).value = 'renamed';
      },
    },
    { name: 'a comment before the map', change: (node: YAMLMap) => (node.commentBefore = ' c') },
    { name: 'a comment after the map', change: (node: YAMLMap) => (node.comment = ' end') },
    {
      name: 'a comment on a nested scalar',
      change: (node: YAMLMap) => ((entryOf(node, 'x') as Scalar).comment = ' one'),
    },
    {
      name: 'a nested list item becomes the string "1"',
      change: (node: YAMLMap) => {
        (entryOf(node, 'y') as YAMLSeq).items[0] = new Scalar('1');
      },
    },
    {
      name: 'a nested list item pushed',
      change: (node: YAMLMap) => (entryOf(node, 'y') as YAMLSeq).items.push(new Scalar('three')),
    },
    {
      name: 'a nested scalar set to "true" in place',
      change: (node: YAMLMap) => (entryOf(node, 'z') as YAMLMap).set('w', 'true'),
    },
    {
      name: 'a nested scalar quoted',
      change: (node: YAMLMap) => {
        ((entryOf(node, 'z') as YAMLMap).get('w', true) as Scalar).type = 'QUOTE_DOUBLE';
      },
    },
    {
      name: 'a nested map made flow',
      change: (node: YAMLMap) => ((entryOf(node, 'z') as YAMLMap).flow = true),
    },
    { name: 'a nested map tagged', change: (node: YAMLMap) => ((entryOf(node, 'z') as YAMLMap).tag = '!t') },
    {
      name: 'a nested map anchored',
      change: (node: YAMLMap) => ((entryOf(node, 'z') as YAMLMap).anchor = 'anchor'),
    },
    {
      name: 'a blank line before a nested list',
      change: (node: YAMLMap) => ((entryOf(node, 'y') as YAMLSeq).spaceBefore = true),
    },
    { name: 'the map made flow', change: (node: YAMLMap) => (node.flow = true) },
    {
      name: 'items replaced',
      change: (node: YAMLMap) => {
        node.items = [new Pair(new Scalar('only'), new Scalar(true))];
      },
    },
    {
      name: 'a multi-line string set',
      change: (node: YAMLMap) => (entryOf(node, 'z') as YAMLMap).set('w', 'two\nlines\n'),
    },
  ])('$name', ({ change }) => {
    for (const options of [{}, { indent: 4, indentSeq: false }]) {
      const doc = parseDocument('a:\n  b: 1\n');
      const node = buildNode(doc.schema, structuredClone(VALUE)) as YAMLMap;
      doc.setIn(['a', 'c'], node);
      const before = cachedPrint(doc, options);
      expect(before).toBe(doc.toString(options));
      change(node);
      const after = cachedPrint(doc, options);
      expect(after).toBe(doc.toString(options));
      expect(after).not.toBe(before);
      expect(cachedPrint(doc, options)).toBe(after);
    }
  });

  it('later changes to the plain value do not reach the node, as with createNode', () => {
    const doc = parseDocument('a: 1\n');
    const value = { x: 1, l: [1], m: { n: 'a' } };
    const node = buildNode(doc.schema, value) as Node;
    const reference = doc.createNode(value) as Node;
    value.x = 2;
    value.l.push(5);
    value.m.n = 'b';
    expect(node.toJS(doc)).toStrictEqual(reference.toJS(doc));
    doc.set('built', node);
    const expected = parseDocument('a: 1\n');
    expected.set('built', reference);
    expect(cachedPrint(doc)).toBe(expected.toString());
  });
});

/** A node tree as kinds and values, to compare buildNode's nodes with createNode's. */
function shape(node: unknown): unknown {
  if (isScalar(node)) return { scalar: node.value, tag: node.tag, anchor: node.anchor, type: node.type };
  if (isPair(node)) return { pair: [shape(node.key), shape(node.value)] };
  if (isMap(node)) return { map: node.items.map(shape), tag: node.tag, anchor: node.anchor, flow: node.flow };
  if (isSeq(node)) return { seq: node.items.map(shape), tag: node.tag, anchor: node.anchor, flow: node.flow };
  return { other: node };
}

describe('buildNode: items made on first read', () => {
  it.each([
    { name: 'a plain object', value: { a: 1, b: 'x', c: [true, null, { d: [] }], e: {} } },
    { name: 'a list', value: [1, 'two', [3], { four: 4 }] },
    { name: 'an object with undefined entries', value: { a: undefined, b: 1 } },
    { name: 'an object with a multi-line string', value: { a: 'x\ny', b: { c: 1 } } },
    { name: 'an own __proto__ key', value: JSON.parse('{"__proto__": {"x": [1]}}') },
    { name: 'integer-like keys', value: { b: 1, 2: 'two', a: 3, 1: 'one' } },
  ])('$name', ({ value }) => {
    const doc = parseDocument('a: 1\n');
    const node = buildNode(doc.schema, value) as YAMLMap | YAMLSeq;
    const reference = doc.createNode(value) as YAMLMap | YAMLSeq;
    expect(isMap(node)).toBe(isMap(reference));
    expect(isSeq(node)).toBe(isSeq(reference));
    expect(node).toBeInstanceOf(Array.isArray(value) ? BuiltSeq : BuiltMap);
    expect(node.toJS(doc)).toStrictEqual(reference.toJS(doc));
    expect(node.toJS(doc)).toStrictEqual(JSON.parse(JSON.stringify(value)));

    // A clone made before the items were read, and one made after.
    const early = node.clone();
    expect(shape(node)).toStrictEqual(shape(reference));
    expect(node.items).toBe(node.items);
    const late = node.clone();
    for (const copy of [early, late]) {
      expect(copy).not.toBe(node);
      expect(shape(copy)).toStrictEqual(shape(reference));
      expect(copy.items).not.toBe(node.items);
      expect(copy.toJS(doc)).toStrictEqual(reference.toJS(doc));
    }

    // Items read are the node's own: a change to them stays, and no clone sees it.
    if (isMap(node)) node.items.push(new Pair(new Scalar('added'), new Scalar(1)));
    else node.items.push(new Scalar('added'));
    expect(node.items.length).toBe(reference.items.length + 1);
    for (const copy of [early, late]) expect(copy.items.length).toBe(reference.items.length);
  });

  it('items set before any read replace the value', () => {
    const doc = parseDocument('a: 1\n');
    const node = buildNode(doc.schema, { a: 1 }) as YAMLMap;
    node.items = [new Pair(new Scalar('b'), new Scalar(2))];
    expect(node.toJS(doc)).toStrictEqual({ b: 2 });
    doc.set('n', node);
    expect(cachedPrint(doc)).toBe('a: 1\nn:\n  b: 2\n');
  });
});

class Thing {
  a = 1;
}
class List extends Array<number> {}
/** [1, <hole>, 3] */
function sparse(): unknown[] {
  const list: unknown[] = [];
  list[0] = 1;
  list[2] = 3;
  return list;
}
const cycle: Record<string, unknown> = { a: 1 };
cycle.self = cycle;

describe('buildNode: undefined where createNode must build', () => {
  it.each([
    { name: 'a class instance', value: new Thing() },
    { name: 'a function', value: () => 1 },
    { name: 'a Map', value: new Map([['a', 1]]) },
    { name: 'a Set', value: new Set([1]) },
    { name: 'a Date', value: new Date(0) },
    { name: 'an object without a prototype', value: Object.assign(Object.create(null), { a: 1 }) },
    { name: 'an Array subclass', value: List.from([1]) },
    { name: 'a bigint', value: 1n },
    { name: 'a symbol', value: Symbol('s') },
    { name: 'undefined', value: undefined },
    { name: 'an object holding a class instance', value: { a: { b: new Thing() } } },
    { name: 'an object holding a function', value: { a: 1, f: () => 1 } },
    { name: 'a list holding a Map', value: [1, new Map()] },
    { name: 'a list holding a Date', value: [new Date(0)] },
    { name: 'a sparse list', value: sparse() },
    { name: 'a list holding undefined', value: [1, undefined] },
    { name: 'an object holding the same sub-object twice', value: { a: SHARED, b: SHARED } },
    { name: 'a list holding the same list twice', value: [SHARED.y, SHARED.y] },
    { name: 'a cycle', value: cycle },
  ])('$name', ({ value }) => {
    const doc = parseDocument('a: 1\n');
    expect(buildNode(doc.schema, value)).toBeUndefined();
  });

  it.each([
    { name: 'a plain object', value: { a: 1 }, kind: BuiltMap },
    { name: 'a list', value: [1], kind: BuiltSeq },
    { name: 'a multi-line string inside', value: { a: 'x\ny' }, kind: BuiltMap },
    { name: 'NaN inside', value: [NaN], kind: BuiltSeq },
    { name: 'a string', value: 'x', kind: Scalar },
    { name: 'null', value: null, kind: Scalar },
    { name: 'the same string twice', value: ['s', 's'], kind: BuiltSeq },
  ])('but a node for $name', ({ value, kind }) => {
    const doc = parseDocument('a: 1\n');
    expect(buildNode(doc.schema, value)).toBeInstanceOf(kind);
  });
});

describe('buildNode: a built list after a sibling with an anchor or a tag', () => {
  // yaml folds a long plain scalar in a list from ctx.indentAtStart, which a preceding sibling's (or the
  // document's) anchor or tag sets: the same list prints otherwise there than in a plain document.
  const VALUE = [LONG];
  const SOURCES = [
    { name: 'an anchored sibling', source: 'l:\n  - &averylonganchorname x\n  - 1\n' },
    { name: 'a tagged sibling', source: 'l:\n  - !!str x\n  - !!str y\n' },
    { name: 'an anchor on the document', source: '--- &averylonganchorname\nl:\n  - 1\n' },
  ];
  const into = (source: string, make: (doc: Document, value: unknown) => Node): Document => {
    const doc = parseDocument(source);
    (doc.get('l') as YAMLSeq).items.push(make(doc, VALUE));
    return doc;
  };
  it.each(SOURCES.flatMap((row) => [0, 80].map((lineWidth) => ({ ...row, lineWidth }))))(
    '$name, lineWidth $lineWidth',
    ({ source, lineWidth }) => {
      const options = { lineWidth };
      // The text of this list at this indentation, printed in a plain document first, and after.
      const plain = into('l:\n  - 1\n', built);
      expect(cachedPrint(plain, options)).toBe(into('l:\n  - 1\n', created).toString(options));
      expect(cachedPrint(into(source, built), options)).toBe(into(source, created).toString(options));
      expect(cachedPrint(plain, options)).toBe(into('l:\n  - 1\n', created).toString(options));
    },
  );
});
