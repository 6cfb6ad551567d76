// What is kept of a LimitRange and a ResourceQuota: only the fields LimitRanger and ResourceQuota admission read
// (status included: ResourceQuota admission decides from its `used`), whether the webhook keeps them from a watch
// or analyze reads them once.

import { isObject, type Json } from '../json.js';
import type { LimitRange, ResourceQuota } from '../rewrite/resources/namespace-rules.js';

/** Only `fields` of `value`, those it has; undefined when it is no object or has none of them. */
function only(value: unknown, fields: readonly string[]): Json | undefined {
  if (!isObject(value)) return undefined;
  const object = value;
  const kept = fields.filter((field) => object[field] !== undefined).map((field) => [field, object[field]]);
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** The names, for messages: no labels, annotations (kubectl's last-applied copy), or managedFields. */
const names = (object: Json) => only(object.metadata, ['name', 'namespace']) ?? {};

/** The fields of a LimitRange item that LimitRanger reads (plugin/pkg/admission/limitranger/admission.go). */
const LIMIT_FIELDS = ['type', 'min', 'max', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** What the fit reads of a LimitRange: its names and spec.limits, each item's bounds. */
export function keptLimitRange(object: Json): LimitRange {
  const limits = isObject(object.spec) ? object.spec.limits : undefined;
  return {
    metadata: names(object),
    spec: Array.isArray(limits) ? { limits: limits.map((item) => only(item, LIMIT_FIELDS) ?? {}) } : {},
  };
}

/**
 * What the fit reads of a ResourceQuota: its names, spec.hard, scopes and scopeSelector, and status.hard and used
 * (ResourceQuota admission decides from `used`: plugin/pkg/admission/resourcequota/controller.go).
 */
export function keptResourceQuota(object: Json): ResourceQuota {
  const spec = only(object.spec, ['hard', 'scopes', 'scopeSelector']);
  const status = only(object.status, ['hard', 'used']);
  return {
    metadata: names(object),
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { status }),
  };
}
