// The API server's JSON as analyze reads it: an object's fields without trusting their shapes (a field of the
// wrong type reads as empty, never throws).

import { isObject, type Json } from '../json.js';

export type { Json };

export const asObject = (value: unknown): Json => (isObject(value) ? value : {});

export const asList = (value: unknown): Json[] => (Array.isArray(value) ? value.map(asObject) : []);

/** The string-valued entries of a map (labels, annotations). */
export function stringMap(value: unknown): Record<string, string> {
  return Object.fromEntries(
    Object.entries(asObject(value)).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

export const nameOf = (object: Json) => String(asObject(object.metadata).name ?? '');
export const namespaceOf = (object: Json) => String(asObject(object.metadata).namespace ?? '');
