// Brings a YAML node in line with a plain value while touching as little as possible: nodes whose value is
// unchanged are kept as they are (comments, quoting, flow style), keys keep their order, a renamed key keeps
// its place and comments, and list items are matched by `name` before position. This is what lets inject
// edit a manifest in place instead of re-serialising it.

import { isDeepStrictEqual } from 'node:util';
import { type Document, isMap, isScalar, isSeq, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function plain(doc: Document, node: unknown): unknown {
  if (node === null || node === undefined) return null;
  return (node as { toJS(doc: Document): unknown }).toJS(doc);
}

/** Returns the node to put where `node` was: `node` itself, updated in place, or a new node. */
export function syncNode(doc: Document, node: unknown, value: unknown): unknown {
  if (isDeepStrictEqual(plain(doc, node), value)) return node;
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
  return doc.createNode(value);
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
      pair = doc.createPair(key, value[key]);
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

/** Containers, env vars and ports are lists of uniquely named objects: match those by name. */
function names(values: unknown[]): string[] | undefined {
  const found = values.map((item) =>
    isObject(item) && typeof item.name === 'string' ? item.name : undefined,
  );
  if (found.some((name) => name === undefined)) return undefined;
  const list = found as string[];
  return new Set(list).size === list.length ? list : undefined;
}

function syncSeq(doc: Document, seq: YAMLSeq, value: unknown[]): void {
  const old = seq.items.map((item) => plain(doc, item));
  const oldNames = names(old);
  const newNames = names(value);
  if (oldNames !== undefined && newNames !== undefined) {
    seq.items = value.map((item, i) => {
      const from = oldNames.indexOf(newNames[i] as string);
      return from < 0 ? doc.createNode(item) : syncNode(doc, seq.items[from], item);
    });
    return;
  }
  if (old.length === value.length) {
    seq.items = value.map((item, i) => syncNode(doc, seq.items[i], item));
    return;
  }
  // Otherwise reuse items that are unchanged, in order, and build the rest.
  const used = new Set<number>();
  seq.items = value.map((item) => {
    const from = old.findIndex((candidate, i) => !used.has(i) && isDeepStrictEqual(candidate, item));
    if (from < 0) return doc.createNode(item);
    used.add(from);
    return seq.items[from];
  });
}
