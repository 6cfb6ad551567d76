// A document's plain value and its first duplicate key. yaml's own duplicate-key check is quadratic in a map's
// size, so inject parses with it off and finds duplicates itself; and where a document is plain (maps with string
// keys, lists, scalars: almost every manifest), one walk both builds the value doc.toJS() would and sees any key
// met twice, where toJS and the check each walked the document (BENCHMARKS.md, "Inject: time and peak memory by
// input size").

import { type Document, isCollection, isMap, isPair, isScalar, isSeq } from 'yaml';

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

function plainValue(node: unknown): unknown {
  if (node === null || node === undefined) return null;
  if (isScalar(node)) {
    const { value } = node;
    return typeof value === 'object' && value !== null ? GIVE_UP : value;
  }
  if (isMap(node)) {
    if (node.tag !== undefined && node.tag !== MAP_TAG) return GIVE_UP;
    const object: Record<string, unknown> = {};
    for (const { key, value } of node.items) {
      if (
        !isScalar(key) ||
        typeof key.value !== 'string' ||
        key.value === '<<' ||
        key.value === '__proto__'
      ) {
        return GIVE_UP;
      }
      if (Object.hasOwn(object, key.value)) return GIVE_UP;
      const entry = plainValue(value);
      if (entry === GIVE_UP) return GIVE_UP;
      object[key.value] = entry;
    }
    return object;
  }
  if (isSeq(node)) {
    if (node.tag !== undefined && node.tag !== SEQ_TAG) return GIVE_UP;
    const list: unknown[] = [];
    for (const item of node.items) {
      if (isPair(item)) return GIVE_UP;
      const entry = plainValue(item);
      if (entry === GIVE_UP) return GIVE_UP;
      list.push(entry);
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
