// copyPlain: the copy structuredClone would make, walking plain objects and lists itself.

import { describe, expect, it } from 'vitest';
import { copyPlain } from '../../src/rewrite/plain-copy.js';

/** Every object reachable from `value`, through own keys, Map and Set entries. */
function objectsOf(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value !== 'object' || value === null || found.has(value)) return found;
  found.add(value);
  if (value instanceof Map) {
    for (const [key, entry] of value) {
      objectsOf(key, found);
      objectsOf(entry, found);
    }
  } else if (value instanceof Set) {
    for (const entry of value) objectsOf(entry, found);
  } else if (ArrayBuffer.isView(value)) {
    found.add(value.buffer);
  } else {
    for (const key of Object.keys(value)) objectsOf((value as Record<string, unknown>)[key], found);
  }
  return found;
}

/** [1, <hole>, 3] */
function sparse(): unknown[] {
  const list: unknown[] = [];
  list[0] = 1;
  list[2] = 3;
  return list;
}

const SHARED = { s: 1, t: [2] };
const cycle: Record<string, unknown> = { a: 1, l: [] };
cycle.self = cycle;
(cycle.l as unknown[]).push(cycle);
const listCycle: unknown[] = [1];
listCycle.push({ back: listCycle });
const date = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));

const POD_SPEC = {
  containers: [
    {
      name: 'web',
      image: 'nginx',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      livenessProbe: { httpGet: { path: '/live', port: 8080 }, initialDelaySeconds: 5 },
      env: [{ name: 'A', value: '1' }, { name: 'B' }],
      resources: { limits: { cpu: '100m', memory: '64Mi' } },
    },
  ],
  restartPolicy: 'Always',
  nodeSelector: {},
  tolerations: [],
};

const VALUES: { name: string; value: unknown }[] = [
  { name: 'a string', value: 'x' },
  { name: 'a number', value: 1.5 },
  { name: 'NaN', value: NaN },
  { name: '-0', value: -0 },
  { name: 'a bigint', value: 10n },
  { name: 'true', value: true },
  { name: 'null', value: null },
  { name: 'undefined', value: undefined },
  { name: 'an empty object', value: {} },
  { name: 'an empty list', value: [] },
  { name: 'a pod spec', value: POD_SPEC },
  { name: 'nested lists', value: [[1, [2, [3, []]]], [{ a: [{}] }]] },
  { name: 'undefined and null entries', value: { a: undefined, b: null, l: [undefined, null] } },
  { name: 'a sparse list', value: sparse() },
  { name: 'a sparse list inside', value: { l: sparse(), m: [sparse()] } },
  { name: 'integer-like keys', value: { b: 1, 2: 'two', a: 3, 1: 'one' } },
  { name: 'an object met twice', value: { a: SHARED, b: SHARED, l: [SHARED, SHARED.t] } },
  { name: 'a cycle', value: cycle },
  { name: 'a cycle through a list', value: listCycle },
  { name: 'a Date', value: { d: date } },
  { name: 'a Date met twice', value: { d: date, e: [date] } },
  {
    name: 'a Map',
    value: {
      m: new Map<unknown, unknown>([
        ['k', { v: 1 }],
        [{ o: 1 }, [2]],
      ]),
    },
  },
  { name: 'a Set', value: { s: new Set([1, 'x', { y: 2 }]) } },
  { name: 'a Uint8Array', value: { u: new Uint8Array([1, 2, 3]) } },
  { name: 'a RegExp', value: { r: /a+b/gi } },
  { name: 'an Error', value: { e: new RangeError('out') } },
  { name: 'boxed primitives', value: [Object(1), Object('s'), Object(true)] },
  {
    name: 'a class instance',
    value: {
      c: new (class Thing {
        a = 1;
        b = { c: [2] };
      })(),
    },
  },
  { name: 'an own __proto__ key', value: JSON.parse('{"__proto__": {"x": 1}, "a": 2}') },
  {
    name: 'an own __proto__ key, nested',
    value: JSON.parse('{"a": [{"__proto__": [1, {"__proto__": null}]}]}'),
  },
  { name: 'keys named as Object.prototype’s', value: { constructor: 1, toString: 'x', hasOwnProperty: [] } },
  {
    name: 'a non-enumerable key and a symbol key are left out',
    value: Object.defineProperties({ [Symbol('s')]: 1, a: 1 }, { hidden: { value: 2, enumerable: false } }),
  },
  {
    name: 'a getter is read',
    value: {
      a: 1,
      get b() {
        return [2];
      },
    },
  },
];

describe('copyPlain: the copy structuredClone makes', () => {
  it.each(VALUES)('$name', ({ value }) => {
    const copy = copyPlain(value);
    expect(copy).toStrictEqual(structuredClone(value));
    const ours = objectsOf(copy);
    for (const object of objectsOf(value)) expect(ours.has(object)).toBe(false);
    if (typeof value === 'object' && value !== null) {
      expect(Object.getPrototypeOf(copy)).toBe(Object.getPrototypeOf(structuredClone(value)));
    }
  });

  it('an object met twice is one object, met twice, in the copy', () => {
    const copy = copyPlain({ a: SHARED, b: SHARED, l: [SHARED, SHARED.t], d: date, e: [date] });
    expect(copy.a).toBe(copy.b);
    expect(copy.l[0]).toBe(copy.a);
    expect(copy.l[1]).toBe(copy.a.t);
    expect(copy.d).toBe(copy.e[0]);
    expect(copy.a).not.toBe(SHARED);
    expect(copy.d).not.toBe(date);
  });

  it('a cycle stays a cycle, of the copy', () => {
    const copy = copyPlain(cycle);
    expect(copy.self).toBe(copy);
    expect((copy.l as unknown[])[0]).toBe(copy);
    expect(copy).not.toBe(cycle);
    const list = copyPlain(listCycle);
    expect((list[1] as { back: unknown }).back).toBe(list);
  });

  it('a sparse list keeps its holes', () => {
    const copy = copyPlain(sparse());
    expect(copy).toHaveLength(3);
    expect(1 in copy).toBe(false);
    expect(Object.keys(copy)).toEqual(['0', '2']);
  });

  it('an own __proto__ key stays an own, enumerable key, and sets no prototype', () => {
    const value = JSON.parse('{"__proto__": {"x": 1}, "a": 2}');
    const copy = copyPlain(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')).toEqual({
      value: { x: 1 },
      writable: true,
      enumerable: true,
      configurable: true,
    });
    expect((copy as { x?: unknown }).x).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).not.toBe(
      Object.getOwnPropertyDescriptor(value, '__proto__')?.value,
    );
  });

  it('a copy changed leaves the value as it was', () => {
    const value = structuredClone(POD_SPEC);
    const copy = copyPlain(value);
    copy.containers[0]?.ports.push({ containerPort: 81, protocol: 'UDP' });
    copy.nodeSelector = { zone: 'a' } as typeof copy.nodeSelector;
    expect(value).toStrictEqual(POD_SPEC);
  });
});

describe('copyPlain: what structuredClone refuses, it refuses too', () => {
  it.each([
    { name: 'a function', value: () => 1 },
    { name: 'a symbol', value: Symbol('s') },
    { name: 'a function inside', value: { a: { f() {} } } },
    { name: 'a symbol inside', value: { a: [1, Symbol('s')] } },
    { name: 'a function in a list', value: [1, () => 2] },
    { name: 'a function in a Map', value: { m: new Map([['f', () => 1]]) } },
    { name: 'a WeakMap', value: { w: new WeakMap() } },
  ])('$name', ({ value }) => {
    let expected: unknown;
    try {
      structuredClone(value);
    } catch (err) {
      expected = err;
    }
    expect(expected).toBeInstanceOf(Error);
    expect(() => copyPlain(value)).toThrow(
      expect.objectContaining({ name: (expected as Error).name, message: (expected as Error).message }),
    );
  });
});

describe('copyPlain: objects structuredClone copies specially', () => {
  it('an object without a prototype', () => {
    const value = Object.assign(Object.create(null), { a: 1, b: { c: 2 } });
    const copy = copyPlain(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.getPrototypeOf(structuredClone(value)));
    expect(copy).toStrictEqual(structuredClone(value));
  });

  it('a list with a named key', () => {
    const value = Object.assign([1, 2], { named: 'x' });
    expect(copyPlain(value)).toStrictEqual(structuredClone(value));
  });

  it('an object met in the plain part and inside a Map', () => {
    const value = { o: SHARED, m: new Map([['k', SHARED]]) };
    const expected = structuredClone(value);
    expect(expected.m.get('k')).toBe(expected.o);
    const copy = copyPlain(value);
    expect(copy.m.get('k')).toBe(copy.o);
  });

  it('a cycle through a Map', () => {
    const value: { m: Map<string, unknown> } = { m: new Map() };
    value.m.set('self', value);
    const expected = structuredClone(value);
    expect(expected.m.get('self')).toBe(expected);
    const copy = copyPlain(value);
    expect(copy.m.get('self')).toBe(copy);
  });

  it('two views of one buffer', () => {
    const buffer = new ArrayBuffer(8);
    const value = { a: new Uint8Array(buffer), b: new Uint16Array(buffer, 2, 2) };
    const expected = structuredClone(value);
    expect(expected.a.buffer).toBe(expected.b.buffer);
    const copy = copyPlain(value);
    expect(copy.a.buffer).toBe(copy.b.buffer);
  });
});
