// RFC 6902 JSON Patch from two JSON values: the operations that turn `before` into `after`. Pure. Small on
// purpose: objects are diffed key by key; arrays item by item when the lengths match or when `after` keeps
// `before`'s items (edited in place) and appends with `/-`; otherwise replaced whole. Correct, not minimal.

import { isDeepStrictEqual } from 'node:util';
import { isObject } from '../json.js';

export type PatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'replace'; path: string; value: unknown };

/** RFC 6901 §3: `~` becomes `~0` and `/` becomes `~1`, in that order. */
export function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function jsonPatch(before: unknown, after: unknown): PatchOperation[] {
  const ops: PatchOperation[] = [];
  walk(before, after, '', ops);
  return ops;
}

function walk(before: unknown, after: unknown, path: string, ops: PatchOperation[]): void {
  if (isDeepStrictEqual(before, after)) return;
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      if (!Object.hasOwn(after, key)) ops.push({ op: 'remove', path: `${path}/${escapePointer(key)}` });
    }
    for (const [key, value] of Object.entries(after)) {
      const at = `${path}/${escapePointer(key)}`;
      if (Object.hasOwn(before, key)) walk(before[key], value, at, ops);
      else ops.push({ op: 'add', path: at, value });
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    // The same items, edited, and maybe more at the end: item by item, then appended.
    const extended =
      after.length >= before.length && before.every((item, index) => sameItem(item, after[index]));
    if (extended || before.length === after.length) {
      before.forEach((item, index) => {
        const at = `${path}/${index}`;
        if (sameItem(item, after[index])) walk(item, after[index], at, ops);
        else ops.push({ op: 'replace', path: at, value: after[index] });
      });
      for (const item of after.slice(before.length)) ops.push({ op: 'add', path: `${path}/-`, value: item });
      return;
    }
  }
  ops.push({ op: 'replace', path, value: after });
}

/**
 * Objects with the same `name` (containers, env, ports: lists Kubernetes keys by name) are the same item,
 * edited; a renamed one, or any other changed value, is a different item and is replaced whole.
 */
function sameItem(before: unknown, after: unknown): boolean {
  if (isObject(before) && isObject(after)) return before.name === after.name;
  return isDeepStrictEqual(before, after);
}
