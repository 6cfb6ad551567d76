// Brings a YAML node in line with a plain value while touching as little as possible: nodes whose value is
// unchanged are kept as they are (comments, quoting, flow style), keys keep their order, a renamed key keeps
// its place and comments, and list items are matched by `name` before position. This is what lets inject
// edit a manifest in place instead of re-serialising it.

import { isDeepStrictEqual } from 'node:util';
import {
  type Document,
  isMap,
  isNode,
  isScalar,
  isSeq,
  type Node,
  Pair,
  Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { isObject, type Json } from '../json.js';
import { buildNode } from './built-nodes.js';

function plain(doc: Document, node: unknown): unknown {
  if (node === null || node === undefined) return null;
  return (node as { toJS(doc: Document): unknown }).toJS(doc);
}

const MAP_TAG = 'tag:yaml.org,2002:map';
const SEQ_TAG = 'tag:yaml.org,2002:seq';

/**
 * The map's keys where its plain value is an object with one property per pair (no merge key, no key that is not
 * a string, no other type of map); else undefined.
 */
function plainKeys(map: YAMLMap): string[] | undefined {
  if (map.tag !== undefined && map.tag !== MAP_TAG) return undefined;
  const keys: string[] = [];
  for (const { key, value } of map.items) {
    if (!isScalar(key) || typeof key.value !== 'string' || !isNode(value)) return undefined;
    if (key.value === '<<' || key.value === '__proto__' || 'addToJSMap' in key) return undefined;
    keys.push(key.value);
  }
  return new Set(keys).size === keys.length ? keys : undefined;
}

/**
 * isDeepStrictEqual(plain(doc, node), value), without building the plain value where the node is a map, list or
 * scalar: syncNode asks at every level on the way down, and building every level's value again cost more than
 * the edit. Anything else (an alias, a tagged collection, a merge key) is built and compared as it was.
 */
function sameValue(doc: Document, node: unknown, value: unknown): boolean {
  if (isScalar(node)) return isDeepStrictEqual(node.value, value);
  if (isMap(node) && isObject(value) && Object.getPrototypeOf(value) === Object.prototype) {
    const keys = plainKeys(node);
    if (keys !== undefined && Object.getOwnPropertySymbols(value).length === 0) {
      if (Object.keys(value).length !== keys.length) return false;
      return node.items.every(
        (pair, i) =>
          Object.hasOwn(value, keys[i] as string) && sameValue(doc, pair.value, value[keys[i] as string]),
      );
    }
  }
  if (isSeq(node) && (node.tag === undefined || node.tag === SEQ_TAG) && node.items.every(isNode)) {
    if (Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype) {
      if (Object.keys(value).length !== value.length) return isDeepStrictEqual(plain(doc, node), value);
      return (
        node.items.length === value.length && node.items.every((item, i) => sameValue(doc, item, value[i]))
      );
    }
  }
  return isDeepStrictEqual(plain(doc, node), value);
}

/** doc.createNode(value), built directly (buildNode) where it can be. */
function newNode(doc: Document, value: unknown): Node {
  return buildNode(doc.schema, value) ?? doc.createNode(value);
}

/** Returns the node to put where `node` was: `node` itself, updated in place, or a new node. */
export function syncNode(doc: Document, node: unknown, value: unknown): unknown {
  if (sameValue(doc, node, value)) return node;
  if (isMap(node) && isObject(value)) {
    syncMap(doc, node, value);
    return node;
  }
  if (isSeq(node) && Array.isArray(value)) {
    syncSeq(doc, node, value);
    return node;
  }
  if (isScalar(node) && (value === null || typeof value !== 'object')) {
    // A string stays in its quoting style; anything else lets the stringifier pick a fitting one.
    if (typeof node.value !== 'string' || typeof value !== 'string') {
      node.type = undefined;
      node.format = undefined;
    }
    node.value = value;
    return node;
  }
  return newNode(doc, value);
}

function keyOf(pair: Pair): string {
  return String(isScalar(pair.key) ? pair.key.value : pair.key);
}

function syncMap(doc: Document, map: YAMLMap, value: Json): void {
  const kept: Pair[] = [];
  // A dropped pair, by the key kept just before it: a new key landing there takes its place and comment.
  const vacated = new Map<string | undefined, Pair>();
  for (const pair of map.items) {
    const key = keyOf(pair);
    if (Object.hasOwn(value, key)) {
      pair.value = syncNode(doc, pair.value, value[key]);
      kept.push(pair);
    } else {
      const before = kept.at(-1);
      const slot = before === undefined ? undefined : keyOf(before);
      if (!vacated.has(slot)) vacated.set(slot, pair);
    }
  }
  const wanted = Object.keys(value);
  wanted.forEach((key, i) => {
    if (kept.some((pair) => keyOf(pair) === key)) return;
    const before = i === 0 ? undefined : wanted[i - 1];
    const at = before === undefined ? 0 : kept.findIndex((pair) => keyOf(pair) === before) + 1;
    const reused = vacated.get(before);
    vacated.delete(before);
    let pair: Pair;
    if (reused !== undefined && isScalar(reused.key)) {
      reused.key.value = key;
      reused.value = syncNode(doc, reused.value, value[key]);
      pair = reused;
    } else {
      pair = new Pair(new Scalar(key), newNode(doc, value[key]));
      // A comment above the first key belongs to that key: keep it there when a new key goes first.
      const first = kept[0];
      if (at === 0 && first !== undefined && isScalar(first.key) && map.commentBefore) {
        first.key.commentBefore = [map.commentBefore, first.key.commentBefore].filter(Boolean).join('\n');
        map.commentBefore = undefined;
      }
    }
    kept.splice(at, 0, pair);
  });
  map.items = kept;
}

const nameOf = (item: unknown) => (isObject(item) && typeof item.name === 'string' ? item.name : undefined);

/** nameOf(plain(doc, node)), read off the node where it is a map as plainKeys reads one. */
function nameOfNode(doc: Document, node: unknown): string | undefined {
  if (!isMap(node) || plainKeys(node) === undefined) return nameOf(plain(doc, node));
  const pair = node.items.find(({ key }) => isScalar(key) && key.value === 'name');
  if (pair === undefined) return undefined;
  const name = isScalar(pair.value) ? pair.value.value : plain(doc, pair.value);
  return typeof name === 'string' ? name : undefined;
}

/** Containers, env vars and ports are lists of uniquely named objects: match those by name. */
function uniqueNames(found: (string | undefined)[]): string[] | undefined {
  if (found.some((name) => name === undefined)) return undefined;
  const list = found as string[];
  return new Set(list).size === list.length ? list : undefined;
}

function syncSeq(doc: Document, seq: YAMLSeq, value: unknown[]): void {
  const oldNames = uniqueNames(seq.items.map((item) => nameOfNode(doc, item)));
  const newNames = uniqueNames(value.map(nameOf));
  if (oldNames !== undefined && newNames !== undefined) {
    seq.items = value.map((item, i) => {
      const from = oldNames.indexOf(newNames[i] as string);
      return from < 0 ? newNode(doc, item) : syncNode(doc, seq.items[from], item);
    });
    return;
  }
  if (seq.items.length === value.length) {
    seq.items = value.map((item, i) => syncNode(doc, seq.items[i], item));
    return;
  }
  // Otherwise reuse items that are unchanged, in order, and build the rest.
  const old = seq.items.map((item) => plain(doc, item));
  const used = new Set<number>();
  seq.items = value.map((item) => {
    const from = old.findIndex((candidate, i) => !used.has(i) && isDeepStrictEqual(candidate, item));
    if (from < 0) return newNode(doc, item);
    used.add(from);
    return seq.items[from];
  });
}
