// A pod (template)'s metadata with the rewrite's annotations added: inject syncs it into the YAML, the webhook
// diffs it into its patch, so both write the same pod. Pure; the input is never mutated.

import { describeValue } from '../errors.js';
import { isObject, type Json } from '../json.js';
import { type FieldPath, ManifestError } from './manifest-error.js';

/**
 * `metadata` (absent or null: none yet) with `added` among its annotations; `at` is where `metadata` sits, for
 * the error about a value that is no map, which the API server would refuse anyway.
 */
export function withAnnotations(
  metadata: unknown,
  added: Readonly<Record<string, string>>,
  resource: string,
  at: FieldPath,
): Json {
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) {
    throw new ManifestError(resource, at, `must be an object, got ${describeValue(metadata)}`);
  }
  const annotations = metadata?.annotations;
  if (annotations !== undefined && annotations !== null && !isObject(annotations)) {
    const problem = `must be a map of annotations, got ${describeValue(annotations)}`;
    throw new ManifestError(resource, [...at, 'annotations'], problem);
  }
  return { ...metadata, annotations: { ...annotations, ...added } };
}
