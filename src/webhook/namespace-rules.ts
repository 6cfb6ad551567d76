// Each namespace's LimitRanges and ResourceQuotas (status included: ResourceQuota admission decides from its
// `used`), kept from a list and watch of each across namespaces (reflector.ts), as the webhook keeps Pod Security
// levels. A namespace's rules are known only once both were listed: until then the pod is left untouched with a
// warning (rewrite/resources/namespace-rules.ts), never fitted to half the rules. A namespace without any is known to have none.

import type {
  LimitRange,
  NamespaceRulesKnowledge,
  ResourceQuota,
} from '../rewrite/resources/namespace-rules.js';
import { type KubeObject, type Reflector, reflect, type WatchOptions, watchOptions } from './reflector.js';

export interface NamespaceRules {
  /** Now, without waiting. */
  knowledge(namespace: string | undefined): NamespaceRulesKnowledge;
  /** Which of the two were never listed yet, and why; undefined once both were. */
  notReady(): string | undefined;
  close(): void;
}

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;

/** Only `fields` of `value`, those it has; undefined when it is no object or has none of them. */
function only(value: unknown, fields: readonly string[]): Json | undefined {
  const object = asObject(value);
  if (object === undefined) return undefined;
  const kept = fields.filter((field) => object[field] !== undefined).map((field) => [field, object[field]]);
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** The names, for messages: no labels, annotations (kubectl's last-applied copy), or managedFields. */
const names = (object: KubeObject) => only(object.metadata, ['name', 'namespace']) ?? {};

/** The fields of a LimitRange item that LimitRanger reads (plugin/pkg/admission/limitranger/admission.go). */
const LIMIT_FIELDS = ['type', 'min', 'max', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** What the fit reads of a LimitRange: its names and spec.limits, each item's bounds. */
export function keptLimitRange(object: KubeObject): LimitRange {
  const limits = asObject(object.spec)?.limits;
  return {
    metadata: names(object),
    spec: Array.isArray(limits) ? { limits: limits.map((item) => only(item, LIMIT_FIELDS) ?? {}) } : {},
  };
}

/**
 * What the fit reads of a ResourceQuota: its names, spec.hard, scopes and scopeSelector, and status.hard and used
 * (ResourceQuota admission decides from `used`: plugin/pkg/admission/resourcequota/controller.go).
 */
export function keptResourceQuota(object: KubeObject): ResourceQuota {
  const spec = only(object.spec, ['hard', 'scopes', 'scopeSelector']);
  const status = only(object.status, ['hard', 'used']);
  return {
    metadata: names(object),
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { status }),
  };
}

const LAGGING = 'pods are fitted to LimitRanges and ResourceQuotas as last seen until it is back';
const UNLISTED = 'pods are left untouched until they are';

export function watchNamespaceRules(options: WatchOptions): NamespaceRules {
  const common = { ...watchOptions(options), unlisted: UNLISTED, lagging: LAGGING };
  const limitRanges: Reflector<LimitRange> = reflect({
    ...common,
    path: '/api/v1/limitranges',
    resource: 'limitranges',
    kind: 'LimitRange',
    keep: keptLimitRange,
  });
  const resourceQuotas: Reflector<ResourceQuota> = reflect({
    ...common,
    path: '/api/v1/resourcequotas',
    resource: 'resourcequotas',
    kind: 'ResourceQuota',
    keep: keptResourceQuota,
  });
  const notReady = () => {
    const missing = [limitRanges.notListed(), resourceQuotas.notListed()].filter((why) => why !== undefined);
    return missing.length === 0 ? undefined : missing.join('; ');
  };
  return {
    knowledge(namespace) {
      if (namespace === undefined) {
        return { state: 'unknown', namespace: '', why: 'the admission request names no namespace' };
      }
      const ranges = limitRanges.store();
      const quotas = resourceQuotas.store();
      if (ranges === undefined || quotas === undefined) {
        return { state: 'unknown', namespace, why: notReady() ?? '' };
      }
      return {
        state: 'known',
        namespace,
        limitRanges: [...(ranges.get(namespace)?.values() ?? [])],
        resourceQuotas: [...(quotas.get(namespace)?.values() ?? [])],
      };
    },
    notReady,
    close() {
      limitRanges.close();
      resourceQuotas.close();
    },
  };
}
