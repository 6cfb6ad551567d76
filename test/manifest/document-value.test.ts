// documentValue: one walk gives doc.toJS()'s value, or the first duplicate key as duplicateKey finds it, for a
// document parsed as inject parses it (yaml's own duplicate-key check off).

import { describe, expect, it } from 'vitest';
import {
  Composer,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  Parser,
  parseAllDocuments,
  type SchemaOptions,
} from 'yaml';
import { documentValue, duplicateKey } from '../../src/manifest/document-value.js';

type Options = ParseOptions & DocumentOptions & SchemaOptions;

/** The documents of `source` as inject's readStream composes them. */
function compose(source: string, options: Options = {}): Document[] {
  const composer = new Composer({ uniqueKeys: false, logLevel: 'error', ...options });
  return [...composer.compose(new Parser().parse(source))];
}

const BILLION_LAUGHS = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
`;

const MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web, "tier": 'front'}
spec:
  containers:
    - name: web
      image: nginx:1.27
      ports: [{containerPort: 80}]
      livenessProbe:
        httpGet: {path: /live, port: 8080}
        initialDelaySeconds: 5
      env:
        - {name: A, value: "1"}
        - name: B
          value: 'true'
        - name: C
  restartPolicy: Always
`;

describe('documentValue: the value doc.toJS() gives', () => {
  it.each<{ name: string; source: string; options?: Options }>([
    { name: 'a plain manifest', source: MANIFEST },
    { name: 'several documents', source: `${MANIFEST}---\napiVersion: v1\nkind: Service\n---\na: 1\n` },
    { name: 'an empty document', source: '---\n' },
    { name: 'a document of a comment', source: '--- # nothing\n' },
    { name: 'an empty value', source: 'a:\nb: ~\nc: null\n' },
    { name: 'a scalar document', source: '42\n' },
    { name: 'a string document', source: '"x"\n' },
    { name: 'a list document', source: '- a\n- 1\n- {b: c}\n' },
    { name: 'flow collections', source: '{a: 1, b: [x, {c: d}], e: [], f: {}}\n' },
    { name: 'a flow map key without a value', source: '{a, b: 1}\n' },
    { name: 'block scalars', source: 'a: |\n  x\n  y\nb: >-\n  folded\n  text\n' },
    {
      name: 'numbers of every form',
      source: 'a: 0x1f\nb: 0o17\nc: 1e3\nd: .inf\ne: -.inf\nf: .nan\ng: -0\n',
    },
    { name: 'an anchor without an alias', source: 'a: &x {b: 1}\nc: 2\n' },
    { name: 'an alias to a map', source: 'a: &x {b: 1}\nc: *x\n' },
    { name: 'an alias to a scalar', source: 'a: &x 1\nc: [*x, *x]\n' },
    { name: 'an alias as a key', source: 'a: &k key\n*k : 2\n' },
    { name: 'an anchored key', source: '&k a: 1\nb: 2\n' },
    { name: 'a merge key, core schema', source: 'base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n' },
    {
      name: 'a merge key, core schema with merge on',
      source: 'base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n',
      options: { merge: true },
    },
    {
      name: 'a merge key, %YAML 1.1',
      source: '%YAML 1.1\n---\nbase: &b {x: 1, y: 0}\nm:\n  <<: *b\n  y: 2\n',
    },
    {
      name: 'two merge keys, %YAML 1.1',
      source: '%YAML 1.1\n---\nb1: &b1 {x: 1}\nb2: &b2 {y: 1}\nm:\n  <<: *b1\n  <<: *b2\n',
    },
    {
      name: 'a merge of a list, %YAML 1.1',
      source: '%YAML 1.1\n---\nb1: &b1 {x: 1}\nb2: &b2 {x: 2, y: 1}\nm:\n  <<: [*b1, *b2]\n',
    },
    { name: 'a merge key that is a plain map, %YAML 1.1', source: '%YAML 1.1\n---\n<<: {a: 1}\nb: 2\n' },
    { name: 'a "<<" key that is only a string', source: '<<: {a: 1}\nb: 2\n' },
    { name: 'a quoted "<<" key, YAML 1.1', source: '"<<": {a: 1}\n', options: { version: '1.1' } },
    {
      name: 'YAML 1.1 scalars',
      source: 'a: yes\nb: on\nc: 0777\nd: 1_000\ne: 2001-12-14\n',
      options: { version: '1.1' },
    },
    { name: 'a !!set, YAML 1.1', source: '!!set\n? a\n? b\n', options: { version: '1.1' } },
    { name: 'an !!omap, YAML 1.1', source: '!!omap\n- a: 1\n- b: 2\n', options: { version: '1.1' } },
    { name: '!!binary, YAML 1.1', source: 'a: !!binary aGVsbG8=\n', options: { version: '1.1' } },
    { name: 'a !!map tag', source: '!!map {a: 1}\n' },
    { name: 'a !!seq tag', source: 'a: !!seq [1]\n' },
    { name: 'a !!str tag', source: 'a: !!str 1\nb: !!str true\n' },
    { name: 'a !!str key', source: '!!str 1: a\n' },
    { name: 'a !!int tag', source: 'a: !!int "7"\n' },
    { name: 'a custom tag on a scalar', source: 'a: !custom x\n' },
    { name: 'a custom tag on a map', source: 'a: !custom {b: 1}\n' },
    { name: 'a custom tag on a list', source: 'a: !custom [1]\n' },
    { name: 'non-string keys', source: '1: a\ntrue: b\nnull: c\n[a]: d\n' },
    { name: 'a number key and a string key alike', source: '1: a\n"1": b\n' },
    { name: 'a map key', source: '{x: 1}: a\n' },
    { name: 'an empty key', source: '? \n: a\n' },
    { name: 'a block scalar key', source: '? |\n  a\n: 1\n' },
    { name: 'a __proto__ key', source: '__proto__: {x: 1}\n' },
    { name: 'a nested __proto__ key', source: 'a:\n  __proto__: [1]\n  b: 2\n' },
    { name: 'keys named as Object.prototype’s', source: 'constructor: 1\ntoString: 2\nhasOwnProperty: 3\n' },
    { name: 'a flow list holding a pair', source: '- [a: 1]\n- [b: 2, c]\n' },
    { name: 'an explicit key in a list', source: '- ? a\n  : 1\n' },
    { name: 'a big int', source: 'a: 12345678901234567890\n', options: { intAsBigInt: true } },
    { name: 'a few aliases, well under the limit', source: 'a: &a [1, 2]\nb: [*a, *a, *a]\n' },
  ])('$name', ({ source, options }) => {
    const docs = compose(source, options);
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      expect(doc.errors).toEqual([]);
      expect(documentValue(doc)).toStrictEqual({ value: doc.toJS() });
    }
  });

  it('an own __proto__ key stays a key, and sets no prototype', () => {
    const [doc] = compose('__proto__: {x: 1}\na: {__proto__: 2}\n');
    const read = documentValue(doc as Document);
    expect('value' in read).toBe(true);
    const value = (read as { value: Record<string, Record<string, unknown>> }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(value.a)).toBe(Object.prototype);
    expect(Object.hasOwn(value.a as object, '__proto__')).toBe(true);
    expect(value).toStrictEqual((doc as Document).toJS());
  });

  it('an alias bomb throws as doc.toJS() does', () => {
    const [doc] = compose(BILLION_LAUGHS);
    let message: string | undefined;
    try {
      (doc as Document).toJS();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/alias count/);
    expect(() => documentValue(doc as Document)).toThrow(message);
  });
});

describe('documentValue: a duplicate key', () => {
  it.each<{ name: string; source: string; at: string; key: unknown; options?: Options }>([
    { name: 'at the top', source: 'a: 1\na: 2\n', at: 'a: 2', key: 'a' },
    { name: 'in a flow map', source: '{a: 1, b: 2, a: 3}\n', at: 'a: 3', key: 'a' },
    { name: 'nested', source: 'a:\n  x: 1\n  x: 2\n', at: 'x: 2', key: 'x' },
    { name: 'in a list item', source: '- a: 1\n- b: 1\n  b: 2\n', at: 'b: 2', key: 'b' },
    { name: 'in a later map’s child', source: '- a: {x: 1}\n- b: {y: 1, y: 2}\n', at: 'y: 2', key: 'y' },
    {
      name: 'in a later map, when an earlier map has one in a child',
      source: 'a:\n  x: 1\n  x: 2\nb: 1\nb: 2\n',
      at: 'b: 2',
      key: 'b',
    },
    {
      name: 'in a later map, when an earlier list item has one in a child',
      source: '- m:\n    x: 1\n    x: 2\n  n: 1\n  n: 2\n',
      at: 'n: 2',
      key: 'n',
    },
    { name: 'after an alias', source: 'a: &x 1\nb: *x\nb: 2\n', at: 'b: 2', key: 'b' },
    { name: 'under a tag', source: 'a: !custom {b: 1, b: 2}\n', at: 'b: 2', key: 'b' },
    { name: 'next to a number key', source: '1: a\nb: 1\nb: 2\n', at: 'b: 2', key: 'b' },
    { name: 'a number key', source: '1: a\n1: b\n', at: '1: b', key: 1 },
    { name: 'a number key written two ways', source: '0x1: a\n1: b\n', at: '1: b', key: 1 },
    { name: 'null written two ways', source: 'null: a\n~: b\n', at: '~: b', key: null },
    { name: 'true written two ways', source: 'true: 1\nTrue: 2\n', at: 'True: 2', key: true },
    { name: 'a quoted and a plain string', source: 'a: 1\n"a": 2\n', at: '"a": 2', key: 'a' },
    { name: 'an anchored key', source: '&k a: 1\na: 2\n', at: 'a: 2', key: 'a' },
    { name: '__proto__', source: '__proto__: 1\n__proto__: 2\n', at: '__proto__: 2', key: '__proto__' },
    { name: 'in a second document', source: 'a: 1\n---\nb: 1\nb: 2\n', at: 'b: 2', key: 'b' },
  ])('$name', ({ source, at, key, options }) => {
    const docs = compose(source, options);
    const found = docs.map((doc) => documentValue(doc)).find((read) => 'duplicate' in read);
    const doc = docs.find((doc) => duplicateKey(doc) !== undefined) as Document;
    expect(found).toStrictEqual({ duplicate: duplicateKey(doc) });
    const duplicate = (found as { duplicate: { key: { value: unknown }; offset: number } }).duplicate;
    expect(duplicate.key.value).toBe(key);
    expect(duplicate.offset).toBe(source.lastIndexOf(at));
  });

  it.each<{ name: string; source: string; options?: Options }>([
    { name: 'keys in different maps', source: 'a: {x: 1}\nb: {x: 2}\nx: 3\n' },
    { name: '1 and "1"', source: '1: a\n"1": b\n' },
    { name: 'true and "true"', source: 'true: a\n"true": b\n' },
    { name: 'null and "null"', source: 'null: a\n"null": b\n' },
    { name: 'two equal collection keys', source: '[a]: 1\n[a]: 2\n' },
    { name: 'an alias key and its anchored scalar', source: 'x: &k a\n*k : 2\n' },
    { name: 'keys in two documents', source: 'a: 1\n---\na: 2\n' },
    { name: 'two merge keys, %YAML 1.1', source: '%YAML 1.1\n---\nb: &b {x: 1}\nm:\n  <<: *b\n  <<: *b\n' },
  ])('none where keys only look alike: $name', ({ source, options }) => {
    for (const doc of compose(source, options)) {
      expect(duplicateKey(doc)).toBeUndefined();
      expect(documentValue(doc)).toStrictEqual({ value: doc.toJS() });
    }
  });
});

describe('documentValue: duplicates exactly where yaml’s own check (uniqueKeys) finds them', () => {
  it.each<{ name: string; source: string; options?: Options }>([
    { name: 'none', source: MANIFEST },
    { name: 'at the top', source: 'a: 1\na: 2\n' },
    { name: 'nested', source: 'a:\n  x: 1\n  x: 2\n' },
    { name: 'in an earlier child and a later map', source: 'a:\n  x: 1\n  x: 2\nb: 1\nb: 2\n' },
    { name: 'in a flow map', source: '{a: 1, a: 2}\n' },
    { name: '1 and "1"', source: '1: a\n"1": b\n' },
    { name: '1.0 and 1', source: '1.0: a\n1: b\n' },
    { name: '0 and -0', source: '0: a\n-0: b\n' },
    { name: 'null and ~', source: 'null: a\n~: b\n' },
    { name: 'two equal collection keys', source: '[a]: 1\n[a]: 2\n' },
    { name: 'an alias key and its anchored scalar', source: 'x: &k a\n*k : 2\n' },
    { name: 'two merge keys, %YAML 1.1', source: '%YAML 1.1\n---\nb: &b {x: 1}\nm:\n  <<: *b\n  <<: *b\n' },
    { name: 'two "<<" keys, core schema', source: '<<: 1\n<<: 2\n' },
  ])('$name', ({ source, options }) => {
    const ours = compose(source, options);
    const yamls = parseAllDocuments(source, { logLevel: 'error', ...options }) as Document[];
    expect(yamls).toHaveLength(ours.length);
    ours.forEach((doc, i) => {
      const theirs = (yamls[i] as Document).errors.filter((err) => err.code === 'DUPLICATE_KEY');
      const read = documentValue(doc);
      expect('duplicate' in read).toBe(theirs.length > 0);
      if ('duplicate' in read) expect(theirs.map((err) => err.pos[0])).toContain(read.duplicate.offset);
    });
  });
});

describe('documentValue: stricter than yaml where two keys would become one property', () => {
  it('.nan twice is a duplicate: yaml compares NaN unequal, but both read as the one key "NaN"', () => {
    const [doc] = compose('.nan: a\n.nan: b\n');
    const read = documentValue(doc as Document);
    expect(read).toStrictEqual({ duplicate: duplicateKey(doc as Document) });
    expect('duplicate' in read && read.duplicate.offset).toBe(8);
  });
});
