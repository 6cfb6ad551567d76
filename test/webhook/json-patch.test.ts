// jsonPatch: the operations it emits, and that a maintained RFC 6902 implementation turns `before` into `after`.

import jsonpatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { escapePointer, jsonPatch } from '../../src/webhook/json-patch.js';

describe('jsonPatch', () => {
  it.each<{ name: string; before: unknown; after: unknown; ops: unknown[] }>([
    {
      name: 'equal values: no operations',
      before: { a: [1, { b: 2 }] },
      after: { a: [1, { b: 2 }] },
      ops: [],
    },
    {
      name: 'keys added, removed and changed',
      before: { keep: 1, drop: 2, change: { deep: 'x' } },
      after: { keep: 1, change: { deep: 'y' }, add: [1] },
      ops: [
        { op: 'remove', path: '/drop' },
        { op: 'replace', path: '/change/deep', value: 'y' },
        { op: 'add', path: '/add', value: [1] },
      ],
    },
    {
      name: '"~" and "/" in keys are escaped (RFC 6901)',
      before: { 'osm-healthcheck/rewrite-probes': 'true', 'a~b': 1 },
      after: { 'osm-healthcheck/rewrite-probes': 'false', 'a~b': 2 },
      ops: [
        { op: 'replace', path: '/osm-healthcheck~1rewrite-probes', value: 'false' },
        { op: 'replace', path: '/a~0b', value: 2 },
      ],
    },
    {
      name: 'an array that only grows at the end: appended with /-',
      before: { list: [{ name: 'app' }] },
      after: { list: [{ name: 'app' }, { name: 'osm-healthcheck' }, { name: 'x' }] },
      ops: [
        { op: 'add', path: '/list/-', value: { name: 'osm-healthcheck' } },
        { op: 'add', path: '/list/-', value: { name: 'x' } },
      ],
    },
    {
      name: 'the same items edited in place, one appended (a container rewritten, the companion added)',
      before: { c: [{ name: 'app', port: 8080 }] },
      after: { c: [{ name: 'app', port: 15901 }, { name: 'osm-healthcheck' }] },
      ops: [
        { op: 'replace', path: '/c/0/port', value: 15901 },
        { op: 'add', path: '/c/-', value: { name: 'osm-healthcheck' } },
      ],
    },
    {
      name: 'an array changed in the middle and grown: replaced whole',
      before: { list: [1, 2] },
      after: { list: [0, 1, 2] },
      ops: [{ op: 'replace', path: '/list', value: [0, 1, 2] }],
    },
    {
      name: 'an array that shrinks: replaced whole',
      before: { list: [1, 2, 3] },
      after: { list: [1, 2] },
      ops: [{ op: 'replace', path: '/list', value: [1, 2] }],
    },
    {
      name: 'same length: item by item, a renamed item replaced whole',
      before: { c: [{ name: 'a', port: 1 }, { name: 'b' }] },
      after: { c: [{ name: 'a', port: 2 }, { name: 'z' }] },
      ops: [
        { op: 'replace', path: '/c/0/port', value: 2 },
        { op: 'replace', path: '/c/1', value: { name: 'z' } },
      ],
    },
    {
      name: 'a value that changes type',
      before: { v: { a: 1 } },
      after: { v: [1] },
      ops: [{ op: 'replace', path: '/v', value: [1] }],
    },
    {
      name: 'null and missing are different',
      before: { a: null },
      after: { b: null },
      ops: [
        { op: 'remove', path: '/a' },
        { op: 'add', path: '/b', value: null },
      ],
    },
  ])('$name', ({ before, after, ops }) => {
    const patch = jsonPatch(before, after);
    expect(patch).toEqual(ops);
    const applied = jsonpatch.applyPatch(structuredClone(before), patch as Operation[], true, false);
    expect(applied.newDocument).toEqual(after);
  });

  it.each([
    { key: 'plain', escaped: 'plain' },
    { key: 'a/b', escaped: 'a~1b' },
    { key: '~1', escaped: '~01' },
    { key: '/~', escaped: '~1~0' },
  ])('escapePointer($key) = $escaped', ({ key, escaped }) => {
    expect(escapePointer(key)).toBe(escaped);
  });
});
