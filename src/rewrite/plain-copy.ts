// The rewrite is a pure function of its input: it changes a copy. structuredClone made that copy at a cost of
// about 4% of inject's time on a cluster dump (BENCHMARKS.md, "Inject: time and peak memory by input size"); pod
// specs are plain JSON-like data, which a walk copies several times faster.

/** The walk met something that is not plain data: the copy is structuredClone's. */
const NOT_PLAIN = Symbol('not plain');

/**
 * A deep copy of `value`, the same as structuredClone's (an object met twice is copied once and met twice again,
 * so a YAML alias or a cycle stays one): made by a walk where `value` holds only plain objects, arrays (no named
 * properties) and primitives, and by structuredClone for anything else (a Date, a Map, a typed array, an object
 * without a prototype; a function or a symbol, which it refuses).
 */
export function copyPlain<T>(value: T): T {
  const copies = new Map<object, unknown>();
  const copy = (item: unknown): unknown => {
    if (typeof item === 'function' || typeof item === 'symbol') throw NOT_PLAIN;
    if (typeof item !== 'object' || item === null) return item;
    const known = copies.get(item);
    if (known !== undefined) return known;
    const proto = Object.getPrototypeOf(item);
    if (Array.isArray(item) && proto === Array.prototype) {
      const list: unknown[] = new Array(item.length);
      copies.set(item, list);
      let own = 0;
      for (let i = 0; i < item.length; i++) {
        if (!(i in item)) continue;
        list[i] = copy(item[i]);
        own += 1;
      }
      // A property beside the indices (only code makes one) is structuredClone's to copy.
      if (Object.keys(item).length !== own) throw NOT_PLAIN;
      return list;
    }
    if (proto !== Object.prototype) throw NOT_PLAIN;
    const object: Record<string, unknown> = {};
    copies.set(item, object);
    for (const key of Object.keys(item)) {
      const entry = copy((item as Record<string, unknown>)[key]);
      // `__proto__` as an own key (JSON.parse makes one) must stay a key, not become the prototype.
      if (key === '__proto__') {
        Object.defineProperty(object, key, {
          value: entry,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        object[key] = entry;
      }
    }
    return object;
  };
  try {
    return copy(value) as T;
  } catch (err) {
    if (err !== NOT_PLAIN) throw err;
    return structuredClone(value);
  }
}
