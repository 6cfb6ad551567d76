// inject's offline view of a namespace's rules: the LimitRange and ResourceQuota objects of its input stream
// (they pass through unchanged) and of --namespace-rules FILE (`kubectl get limitrange,resourcequota -n shop
// -o yaml`), each checked where admission reads it, and the knowledge one workload gets from them.

import { describeValue } from '../../errors.js';
import { isObject, type Json } from '../../json.js';
import { parseQuantity } from '../../kube/quantity.js';
import { type FieldPath, ManifestError } from '../manifest-error.js';
import type { LimitRange, NamespaceRulesKnowledge, ResourceQuota } from './namespace-rules.js';

export interface NamespaceRuleSet {
  limitRanges: LimitRange[];
  resourceQuotas: ResourceQuota[];
}

const RULE_KINDS = ['LimitRange', 'ResourceQuota'] as const;
const LIMIT_FIELDS = ['min', 'max', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** A ResourceList, every value a quantity (the API server refuses the object otherwise). */
function checkList(value: unknown, resource: string, path: FieldPath): void {
  if (value === undefined) return;
  if (!isObject(value))
    throw new ManifestError(resource, path, `must be a map of quantities, got ${describeValue(value)}`);
  for (const [name, text] of Object.entries(value)) {
    const parsed =
      typeof text === 'string' || typeof text === 'number' ? parseQuantity(String(text)) : undefined;
    if (parsed === undefined || 'invalid' in parsed) {
      throw new ManifestError(
        resource,
        [...path, name],
        `must be a Kubernetes quantity, e.g. 100m or 64Mi, got ${describeValue(text)}`,
      );
    }
  }
}

function checkLimitRange(object: Json, resource: string, path: FieldPath): void {
  const spec = object.spec;
  if (!isObject(spec) || !Array.isArray(spec.limits)) {
    throw new ManifestError(
      resource,
      [...path, 'spec', 'limits'],
      `a LimitRange needs a list of limits here, got ${describeValue(isObject(spec) ? spec.limits : spec)}`,
    );
  }
  spec.limits.forEach((item: unknown, index) => {
    const at = [...path, 'spec', 'limits', index];
    if (!isObject(item))
      throw new ManifestError(resource, at, `must be an object, got ${describeValue(item)}`);
    for (const field of LIMIT_FIELDS) checkList(item[field], resource, [...at, field]);
  });
}

function checkResourceQuota(object: Json, resource: string, path: FieldPath): void {
  const spec = isObject(object.spec) ? object.spec : {};
  checkList(spec.hard, resource, [...path, 'spec', 'hard']);
  if (
    spec.scopes !== undefined &&
    !(Array.isArray(spec.scopes) && spec.scopes.every((s) => typeof s === 'string'))
  ) {
    throw new ManifestError(
      resource,
      [...path, 'spec', 'scopes'],
      `must be a list of scope names, got ${describeValue(spec.scopes)}`,
    );
  }
  const status = isObject(object.status) ? object.status : {};
  checkList(status.hard, resource, [...path, 'status', 'hard']);
  checkList(status.used, resource, [...path, 'status', 'used']);
}

/**
 * The LimitRanges and ResourceQuotas (core v1) of one document: itself, or the items of a List (or of a
 * LimitRangeList / ResourceQuotaList, whose items may omit `kind`). Throws ManifestError, with a path from the
 * document root, for a field admission reads that holds no quantity.
 */
export function ruleDocuments(document: unknown, base: FieldPath = []): NamespaceRuleSet {
  const found: NamespaceRuleSet = { limitRanges: [], resourceQuotas: [] };
  const visit = (value: unknown, path: FieldPath, itemKind?: string) => {
    if (!isObject(value)) return;
    const kind = typeof value.kind === 'string' ? value.kind : itemKind;
    if (kind?.endsWith('List') && Array.isArray(value.items)) {
      const inner = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
      value.items.forEach((item: unknown, index) => {
        visit(item, [...path, 'items', index], inner);
      });
      return;
    }
    if (!RULE_KINDS.some((k) => k === kind)) return;
    if (value.apiVersion !== undefined && value.apiVersion !== 'v1') return;
    const metadata = isObject(value.metadata) ? value.metadata : {};
    const resource = `${kind}/${typeof metadata.name === 'string' ? metadata.name : '<unnamed>'}`;
    if (kind === 'LimitRange') {
      checkLimitRange(value, resource, path);
      found.limitRanges.push(value as LimitRange);
    } else {
      checkResourceQuota(value, resource, path);
      found.resourceQuotas.push(value as ResourceQuota);
    }
  };
  visit(document, base);
  return found;
}

const namespaceOf = (object: LimitRange | ResourceQuota) =>
  typeof object.metadata?.namespace === 'string' && object.metadata.namespace !== ''
    ? object.metadata.namespace
    : undefined;

/**
 * The rules a workload of `namespace` gets: those of its namespace and those that name none (they go where
 * kubectl applies them, with the workload). A workload that names no namespace gets the rules of the one
 * namespace the rules name; rules of several namespaces for it are an error. No rule for it: unchecked.
 */
export function rulesFor(
  set: NamespaceRuleSet,
  namespace: string | undefined,
  resource: string,
): NamespaceRulesKnowledge {
  const all = [...set.limitRanges, ...set.resourceQuotas];
  const named = [...new Set(all.flatMap((rule) => namespaceOf(rule) ?? []))];
  if (namespace === undefined && named.length > 1) {
    const list = named.map((n) => `"${n}"`).join(', ');
    throw new ManifestError(
      resource,
      ['metadata', 'namespace'],
      `is not set, and the namespace rules given are for namespaces ${list}: set it`,
    );
  }
  const ns = namespace ?? named[0];
  const applies = (rule: LimitRange | ResourceQuota) => {
    const own = namespaceOf(rule);
    return own === undefined || own === ns;
  };
  const limitRanges = set.limitRanges.filter(applies);
  const resourceQuotas = set.resourceQuotas.filter(applies);
  if (limitRanges.length + resourceQuotas.length === 0) return { state: 'unchecked' };
  return { state: 'known', namespace: ns ?? '', limitRanges, resourceQuotas };
}

export function mergeRuleSets(...sets: NamespaceRuleSet[]): NamespaceRuleSet {
  return {
    limitRanges: sets.flatMap((set) => set.limitRanges),
    resourceQuotas: sets.flatMap((set) => set.resourceQuotas),
  };
}
