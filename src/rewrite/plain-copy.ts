// The rewrite is a pure function of its input: it changes a copy. structuredClone made that copy at a cost of
// about 4% of inject's time on a cluster dump (BENCHMARKS.md, "Inject: time and peak memory by input size"); pod
// specs are plain JSON-like data, which a walk copies several times faster.

/**
 * A deep copy of `value`, as structuredClone would make it (an object met twice is copied once and met twice
 * again, so a YAML alias or a cycle stays one), walking plain objects and arrays itself; anything else inside
 * (a Date, a Map, a typed array) goes to structuredClone.
 */
export function copyPlain<T>(value: T): T {
  const copies = new Map<object, unknown>();
  const copy = (item: unknown): unknown => {
    // A function or a symbol is no data: structuredClone refuses it, and so must the copy.
    if (typeof item === 'function' || typeof item === 'symbol') return structuredClone(item);
    if (typeof item !== 'object' || item === null) return item;
    const known = copies.get(item);
    if (known !== undefined) return known;
    const proto = Object.getPrototypeOf(item);
    if (Array.isArray(item) && proto === Array.prototype) {
      const list: unknown[] = new Array(item.length);
      copies.set(item, list);
      for (let i = 0; i < item.length; i++) if (i in item) list[i] = copy(item[i]);
      return list;
    }
    if (proto === Object.prototype || proto === null) {
      const object: Record<string, unknown> = proto === null ? Object.create(null) : {};
      copies.set(item, object);
      for (const key of Object.keys(item)) {
        const entry = copy((item as Record<string, unknown>)[key]);
        // `__proto__` as an own key (JSON.parse makes one) must stay a key, not become the prototype.
        if (key === '__proto__')
          Object.defineProperty(object, key, {
            value: entry,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else object[key] = entry;
      }
      return object;
    }
    const cloned = structuredClone(item);
    copies.set(item, cloned);
    return cloned;
  };
  return copy(value) as T;
}
