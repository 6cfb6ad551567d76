// The nodes inject builds itself (our containers, new fields) have no comments, styles, tags or anchors, so
// their text depends only on their value and where they stand. In a cluster dump the init container is the
// same in every pod and the companion differs only in its probe table, yet yaml printed every scalar of them
// again each time, testing each against every tag's pattern: two fifths of inject's time went there. A built
// map or list is printed once per value and indentation, and its text reused; built from plain JSON data, its
// items are made only when something reads them, so a text printed before costs no nodes (BENCHMARKS.md,
// "Inject: time and peak memory by input size").

import { Document, isScalar, type Node, Pair, Scalar, type Schema, YAMLMap, YAMLSeq } from 'yaml';

type Context = NonNullable<Parameters<YAMLMap['toString']>[0]>;

/** What one print (printDocument) carries down in its options: each built node's key, worked out once. */
export interface BuiltTexts {
  readonly keys: WeakMap<Node, string | undefined>;
}

/** The option under which printDocument hands its BuiltTexts to the nodes below. */
export const BUILT_TEXTS = 'osmHealthcheckBuiltTexts';

/** Texts printed so far, by key; cleared when full, so a dump of all-different pods holds no more than this. */
const texts = new Map<string, string>();
const MOST_TEXTS = 512;
/** Everything in a print's options that can change how a node prints, as one string per options object. */
const signatures = new WeakMap<object, string | undefined>();

/**
 * Where a built map or list keeps its items, or what they are still to be made from: the JSON of the value it
 * was built for (a copy, as createNode's nodes are: the caller may change its value afterwards), or, below that,
 * a part of the value parsed back from it, which nothing else holds.
 */
const ITEMS = Symbol('items');
const PENDING = Symbol('pending');
const FLOW = Symbol('flow');

interface Lazy {
  [ITEMS]: unknown[] | undefined;
  [PENDING]: unknown;
  [FLOW]?: boolean;
  schema?: Schema;
}

export class BuiltMap extends YAMLMap {
  override toString(ctx?: Context, onComment?: () => void, onChompKeep?: () => void): string {
    return printOnce(this, ctx, () => super.toString(ctx, onComment, onChompKeep));
  }
}

export class BuiltSeq extends YAMLSeq {
  override toString(ctx?: Context, onComment?: () => void, onChompKeep?: () => void): string {
    return printOnce(this, ctx, () => super.toString(ctx, onComment, onChompKeep));
  }
}

// `items` as an accessor (TypeScript allows no accessor over a property): made on first read, from PENDING.
for (const Built of [BuiltMap, BuiltSeq]) {
  Object.defineProperty(Built.prototype, 'items', {
    get(this: Lazy) {
      this[ITEMS] ??= itemsOf(this);
      return this[ITEMS];
    },
    set(this: Lazy, items: unknown[]) {
      this[ITEMS] = items;
      this[PENDING] = undefined;
    },
  });
  // yaml asks a map or list under a key for `flow ?? items.length === 0`: answered without making the items
  // where they are still to be made (false where there are some, as items.length would have said).
  Object.defineProperty(Built.prototype, 'flow', {
    get(this: Lazy) {
      if (this[FLOW] !== undefined || this[ITEMS] !== undefined) return this[FLOW];
      return isEmpty(this[PENDING]) ? undefined : false;
    },
    set(this: Lazy, flow: boolean | undefined) {
      this[FLOW] = flow;
    },
  });
}

function isEmpty(pending: unknown): boolean {
  if (typeof pending === 'string') return pending === '[]' || pending === '{}';
  if (Array.isArray(pending)) return pending.length === 0;
  for (const _ in pending as object) return false;
  return true;
}

function itemsOf(node: Lazy): unknown[] {
  const { schema } = node;
  const pending = node[PENDING];
  const value = typeof pending === 'string' ? JSON.parse(pending) : pending;
  node[PENDING] = undefined;
  if (Array.isArray(value)) return value.map((item) => lazyNode(schema, item));
  const items: Pair[] = [];
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    if (entry !== undefined) items.push(new Pair(new Scalar(key), lazyNode(schema, entry)));
  }
  return items;
}

/**
 * The node for JSON data: a scalar, or a built map or list whose items wait until read, made from `json` (the
 * value's JSON, where the value is the caller's) or from `value` itself (where it is a part parsed back).
 */
function lazyNode(schema: Schema | undefined, value: unknown, json?: string): Node {
  if (value === null || typeof value !== 'object') return new Scalar(value);
  const node = Array.isArray(value) ? new BuiltSeq(schema) : new BuiltMap(schema);
  (node as unknown as Lazy)[PENDING] = json ?? value;
  (node as unknown as Lazy)[ITEMS] = undefined;
  return node;
}

/** yaml's own core schema, as createNode and the printer use it untouched. */
const CORE_TAGS = new Document().schema.tags;

/**
 * The schema is yaml's core one with no tags of its own (one could claim a value that createNode would tag, or
 * make a string print quoted to stay one) and no sorting of map entries (createNode's order would differ).
 */
function isPlainCore(schema: Schema): boolean {
  const { tags } = schema;
  if (schema.name !== 'core' || schema.sortMapEntries) return false;
  return tags.length === CORE_TAGS.length && tags.every((tag, i) => tag === CORE_TAGS[i]);
}

/**
 * The nodes yaml's createNode makes for `value` (no tag, no anchor, undefined entries left out) where it is plain
 * data (strings, numbers, booleans, null, plain objects and arrays) holding no object twice, without createNode's
 * search of the schema's tags for every node; undefined for anything else, or in any other schema (createNode's to
 * build).
 */
export function buildNode(schema: Schema, value: unknown): Node | undefined {
  if (!isPlainCore(schema)) return undefined;
  if (isJsonData(value, new Set())) return lazyNode(schema, value, JSON.stringify(value));
  const seen = new Set<object>();
  const build = (item: unknown): Node | undefined => {
    if (item === null || typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') {
      return new Scalar(item);
    }
    if (typeof item !== 'object' || seen.has(item)) return undefined;
    seen.add(item);
    if (Array.isArray(item)) {
      if (Object.getPrototypeOf(item) !== Array.prototype) return undefined;
      const seq = new BuiltSeq(schema);
      for (let i = 0; i < item.length; i++) {
        const node = i in item ? build(item[i]) : undefined;
        if (node === undefined) return undefined;
        seq.items.push(node);
      }
      return seq;
    }
    if (Object.getPrototypeOf(item) !== Object.prototype) return undefined;
    const map = new BuiltMap(schema);
    for (const [key, entry] of Object.entries(item)) {
      if (entry === undefined) continue;
      const node = build(entry);
      if (node === undefined) return undefined;
      map.items.push(new Pair(new Scalar(key), node));
    }
    return map;
  };
  return build(value);
}

/**
 * Plain data that JSON.stringify writes exactly, so its JSON tells apart every two values that print
 * differently: no NaN, infinity or -0 (JSON writes them as null and 0), no hole or undefined in a list, no object
 * twice, and no multi-line string (printed as a block scalar, which may reach beyond its node).
 */
function isJsonData(value: unknown, seen: Set<object>): boolean {
  if (value === null || typeof value === 'boolean') return true;
  if (typeof value === 'string') return !value.includes('\n');
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== 'object' || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isJsonData(value[i], seen)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) {
    const entry = (value as Record<string, unknown>)[key];
    if (entry !== undefined && !isJsonData(entry, seen)) return false;
  }
  return true;
}

function printOnce(node: BuiltMap | BuiltSeq, ctx: Context | undefined, print: () => string): string {
  const built = (ctx?.options as Record<string, unknown> | undefined)?.[BUILT_TEXTS] as
    | BuiltTexts
    | undefined;
  // Only where the context is the plain block one yaml gives a map's or list's value: in a flow collection, as
  // a key, or in a set, the same node prints otherwise.
  if (
    ctx === undefined ||
    built === undefined ||
    ctx.inFlow === true ||
    ctx.implicitKey ||
    ctx.allNullValues
  ) {
    return print();
  }
  const options = signature(ctx);
  if (options === undefined) return print();
  const value = keyOf(node, built.keys);
  if (value === undefined) return print();
  const key = `${options}\u0000${ctx.indent.length}\u0000${value}`;
  const known = texts.get(key);
  if (known !== undefined) return known;
  const text = print();
  if (texts.size >= MOST_TEXTS) texts.clear();
  texts.set(key, text);
  return text;
}

/**
 * Undefined where a node's text may depend on more than its value and indentation: a schema other than yaml's
 * core one, or folded lines (where a line breaks depends on what stands before the node on its first line).
 */
function signature(ctx: Context): string | undefined {
  if (signatures.has(ctx.options)) return signatures.get(ctx.options);
  const options = ctx.options as Record<string, unknown>;
  const core = isPlainCore(ctx.doc.schema);
  const folded = typeof options.lineWidth === 'number' && options.lineWidth > 0;
  let known: string | undefined;
  if (core && !folded) {
    known = `${ctx.indentStep.length}|${ctx.forceBlockIndent ?? false}`;
    for (const name in options) {
      const value = options[name];
      if (name === BUILT_TEXTS || typeof value === 'function') continue;
      known += `|${name}=${typeof value === 'string' || typeof value === 'object' ? JSON.stringify(value) : String(value)}`;
    }
  }
  signatures.set(ctx.options, known);
  return known;
}

/**
 * The node's value as a string that tells apart every two values that print differently; undefined where the
 * node is not one inject built as it stands (a comment, a style, a tag, a node from the source) or holds a
 * value whose printing reaches beyond the node (a multi-line string may call for a kept final newline).
 */
function keyOf(node: unknown, keys: WeakMap<Node, string | undefined>): string | undefined {
  if (isScalar(node)) return scalarKey(node);
  if (!(node instanceof BuiltMap || node instanceof BuiltSeq)) return undefined;
  if (keys.has(node)) return keys.get(node);
  let key: string | undefined;
  if (!node.tag && !node.anchor && !node.comment && !node.commentBefore && !node.spaceBefore && !node.flow) {
    const lazy = node as unknown as Lazy;
    const pending = lazy[ITEMS] === undefined ? lazy[PENDING] : undefined;
    if (pending !== undefined) key = typeof pending === 'string' ? pending : JSON.stringify(pending);
    else key = node instanceof BuiltMap ? mapKey(node, keys) : seqKey(node, keys);
  }
  keys.set(node, key);
  return key;
}

// A built node's key is the JSON of its value, whether its items are made yet or not, so the two meet in the cache.
function mapKey(map: BuiltMap, keys: WeakMap<Node, string | undefined>): string | undefined {
  const parts: string[] = [];
  for (const pair of map.items) {
    const name = scalarKey(pair.key);
    const value = keyOf(pair.value, keys);
    if (name === undefined || value === undefined) return undefined;
    parts.push(`${name}:${value}`);
  }
  return `{${parts.join(',')}}`;
}

function seqKey(seq: BuiltSeq, keys: WeakMap<Node, string | undefined>): string | undefined {
  const parts: string[] = [];
  for (const item of seq.items) {
    const value = keyOf(item, keys);
    if (value === undefined) return undefined;
    parts.push(value);
  }
  return `[${parts.join(',')}]`;
}

/** The scalar's JSON, where JSON tells it apart from every scalar that prints otherwise. */
function scalarKey(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  const { value } = node;
  if (node.type || node.format || node.tag || node.anchor || node.comment || node.commentBefore)
    return undefined;
  if (node.spaceBefore || node.minFractionDigits !== undefined) return undefined;
  if (typeof value === 'string') return value.includes('\n') ? undefined : JSON.stringify(value);
  if (typeof value === 'number')
    return Number.isFinite(value) && !Object.is(value, -0) ? JSON.stringify(value) : undefined;
  if (typeof value === 'boolean' || value === null) return JSON.stringify(value);
  return undefined;
}
