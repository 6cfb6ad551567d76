// syncNode: a YAML node brought in line with a value while everything unchanged stays byte for byte.

import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { syncNode } from '../../src/manifest/sync.js';

function sync(source: string, change: (value: Record<string, unknown>) => void): string {
  const doc = parseDocument(source);
  const value = doc.toJS() as Record<string, unknown>;
  change(value);
  const next = syncNode(doc, doc.contents, value);
  if (next !== doc.contents) doc.contents = next as typeof doc.contents;
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

describe('syncNode', () => {
  it.each([
    {
      name: 'nothing changed: the text is kept, odd quoting and flow style included',
      source: 'a: \'x\' # one\nb: {c: 1}\nd:\n  - "e"\n',
      change: () => {},
      expected: 'a: \'x\' # one\nb: {c: 1}\nd:\n  - "e"\n',
    },
    {
      name: 'a renamed key keeps its place, the comment above it and its style',
      source: 'probe:\n  a: 1\n  # the handler\n  grpc: {port: 1}\n  z: 2\n',
      change: (v: Record<string, unknown>) => {
        v.probe = { a: 1, httpGet: { port: 2 }, z: 2 };
      },
      expected: 'probe:\n  a: 1\n  # the handler\n  httpGet: {port: 2}\n  z: 2\n',
    },
    {
      name: 'a new key goes after the key it follows in the value',
      source: 'm:\n  a: 1 # keep\n  c: 3\n',
      change: (v: Record<string, unknown>) => {
        v.m = { a: 1, b: 2, c: 3 };
      },
      expected: 'm:\n  a: 1 # keep\n  b: 2\n  c: 3\n',
    },
    {
      name: 'a new first key leaves the comment above the old first key where it was',
      source: 'spec:\n  # the app\n  containers: []\n',
      change: (v: Record<string, unknown>) => {
        v.spec = { init: [], containers: [] };
      },
      expected: 'spec:\n  init: []\n  # the app\n  containers: []\n',
    },
    {
      name: 'named list items are matched by name, so an insert in front keeps their comments',
      source: 'l:\n  - name: a # first\n    v: 1\n  - name: b\n',
      change: (v: Record<string, unknown>) => {
        v.l = [{ name: 'new' }, { name: 'a', v: 2 }, { name: 'b' }];
      },
      expected: 'l:\n  - name: new\n  - name: a # first\n    v: 2\n  - name: b\n',
    },
    {
      name: 'a scalar changing type loses its quotes, a string keeps them',
      source: 'a: "1"\nb: "x"\n',
      change: (v: Record<string, unknown>) => {
        v.a = 1;
        v.b = 'y';
      },
      expected: 'a: 1\nb: "y"\n',
    },
    {
      name: 'a flow map stays a flow map',
      source: 'h: {path: /a, port: 1}\n',
      change: (v: Record<string, unknown>) => {
        v.h = { path: '/b', port: 2, scheme: 'HTTP' };
      },
      expected: 'h: {path: /b, port: 2, scheme: HTTP}\n',
    },
    {
      name: 'removed keys go, the rest stay',
      source: 'a: 1 # a\nb: 2\nc: 3 # c\n',
      change: (v: Record<string, unknown>) => {
        delete v.b;
      },
      expected: 'a: 1 # a\nc: 3 # c\n',
    },
    {
      name: 'an alias whose value is unchanged stays an alias beside a change',
      source: 'base: &b {x: 1}\nuse: *b\nother: 1\n',
      change: (v: Record<string, unknown>) => {
        v.other = 2;
      },
      expected: 'base: &b {x: 1}\nuse: *b\nother: 2\n',
    },
    {
      name: 'a map with a << key is compared by its whole value, and kept where that is unchanged',
      source: 'base: &b\n  x: 1\nm:\n  <<: *b\n  y: 2\nother: 1\n',
      change: (v: Record<string, unknown>) => {
        v.other = 2;
      },
      expected: 'base: &b\n  x: 1\nm:\n  <<: *b\n  y: 2\nother: 2\n',
    },
    {
      name: 'a named list item that is an alias is matched by the name it resolves to',
      source: 'a: &a {name: x, v: 1}\nl:\n  - *a\n  - name: y\n',
      change: (v: Record<string, unknown>) => {
        v.l = [{ name: 'y' }, { name: 'x', v: 1 }];
      },
      expected: 'a: &a {name: x, v: 1}\nl:\n  - name: y\n  - *a\n',
    },
    {
      name: 'new values print as createNode makes them: an undefined entry left out, an object met twice an alias',
      source: 'a: 1\n',
      change: (v: Record<string, unknown>) => {
        const shared = { x: 1 };
        v.b = [shared, shared];
        v.c = { d: undefined, e: null, f: [1.5, true, 'on', '1'] };
      },
      expected:
        'a: 1\nb:\n  - &a1\n    x: 1\n  - *a1\nc:\n  e: null\n  f:\n    - 1.5\n    - true\n    - on\n    - "1"\n',
    },
  ])('$name', ({ source, change, expected }) => {
    expect(sync(source, change)).toBe(expected);
  });
});
