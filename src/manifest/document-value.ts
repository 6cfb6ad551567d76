// A document's plain value and its first duplicate key. yaml's own duplicate-key check is quadratic in a map's
// size, so inject parses with it off and finds duplicates itself; and where a document is plain (maps with string
// keys, lists, scalars: almost every manifest), one walk both builds the value doc.toJS() would and sees any key
// met twice, where toJS and the check each walked the document (BENCHMARKS.md, "Inject: time and peak memory by
// input size").

import {
  type Document,
  isCollection,
  isMap,
  isPair,
  isScalar,
  type Pair,
  Scalar,
  YAMLMap,
  YAMLSeq,
} from 'yaml';

export interface DuplicateKey {
  key: { value: unknown };
  offset: number;
}

export type DocumentValue = { value: unknown } | { duplicate: DuplicateKey };

const MAP_TAG = 'tag:yaml.org,2002:map';
const SEQ_TAG = 'tag:yaml.org,2002:seq';
/** The walk met what it does not build as yaml would (an alias, a tag, a key that is no string), or a repeat. */
const GIVE_UP = Symbol('give up');

/** doc.toJS(), or the first duplicate key as duplicateKey finds it; doc.toJS() may throw (an alias bomb). */
export function documentValue(doc: Document): DocumentValue {
  const value = plainValue(doc.contents);
  if (value !== GIVE_UP) return { value };
  const duplicate = duplicateKey(doc);
  if (duplicate !== undefined) return { duplicate };
  return { value: doc.toJS() };
}

// instanceof, not yaml's isScalar/isMap/isSeq: one prototype check against a symbol-keyed read per test, on
// every node of every document (the classes are yaml's own; a parsed node is an instance of exactly one).
function plainValue(node: unknown): unknown {
  if (node === null || node === undefined) return null;
  if (node instanceof Scalar) {
    const { value } = node;
    return typeof value === 'object' && value !== null ? GIVE_UP : value;
  }
  if (node instanceof YAMLMap) {
    if (node.tag !== undefined && node.tag !== MAP_TAG) return GIVE_UP;
    const object: Record<string, unknown> = {};
    const { items } = node;
    for (let i = 0; i < items.length; i++) {
      const { key, value } = items[i] as Pair;
      if (!(key instanceof Scalar)) return GIVE_UP;
      const name = key.value;
      if (typeof name !== 'string' || name === '<<' || name === '__proto__' || Object.hasOwn(object, name)) {
        return GIVE_UP;
      }
      const entry = plainValue(value);
      if (entry === GIVE_UP) return GIVE_UP;
      object[name] = entry;
    }
    return object;
  }
  if (node instanceof YAMLSeq) {
    if (node.tag !== undefined && node.tag !== SEQ_TAG) return GIVE_UP;
    const { items } = node;
    const list: unknown[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (isPair(item)) return GIVE_UP;
      const entry = plainValue(item);
      if (entry === GIVE_UP) return GIVE_UP;
      list[i] = entry;
    }
    return list;
  }
  return GIVE_UP;
}

/**
 * The first key that appears twice in one map of `doc`, compared as yaml's own check does (equal scalars; but
 * NaN twice too, which yaml lets pass and toJS folds into one key "NaN"), in the order yaml's visit would meet it. A walk of our own: visit's frozen path per node cost more than the check.
 */
export function duplicateKey(doc: Document): DuplicateKey | undefined {
  const walk = (node: unknown): DuplicateKey | undefined => {
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const { key } of node.items) {
        if (!isScalar(key)) continue;
        if (seen.has(key.value)) return { key, offset: key.range?.[0] ?? 0 };
        seen.add(key.value);
      }
    }
    if (isCollection(node)) {
      for (const item of node.items) {
        const found = walk(item);
        if (found !== undefined) return found;
      }
    } else if (isPair(node)) {
      return walk(node.key) ?? walk(node.value);
    }
    return undefined;
  };
  return walk(doc.contents);
}
