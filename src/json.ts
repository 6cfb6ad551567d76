// A JSON object as parsed (`Record<string, unknown>`) and the one test that a value is one: every reader of
// manifests, admission reviews and API answers starts from these.

export type Json = Record<string, unknown>;

/** An object, not null and not an array: what JSON calls an object. */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
