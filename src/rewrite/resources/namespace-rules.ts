// What a pod's namespace imposes on every container beyond Pod Security: its LimitRanges (LimitRanger admission)
// and ResourceQuotas (ResourceQuota admission), as the webhook keeps them from a list and watch and as inject
// reads them from its input. Only the fields admission reads are typed; the rest rides along.

/** A quantity map as the API writes it: `{ cpu: "100m", memory: "64Mi" }`. */
export type ResourceList = Readonly<Record<string, string>>;

/** core/v1 LimitRangeItem. */
export interface LimitRangeItem {
  /** `Container`, `Pod` or `PersistentVolumeClaim`. */
  type?: string;
  min?: ResourceList;
  max?: ResourceList;
  default?: ResourceList;
  defaultRequest?: ResourceList;
  maxLimitRequestRatio?: ResourceList;
  [field: string]: unknown;
}

export interface LimitRange {
  metadata?: { name?: string; namespace?: string; [field: string]: unknown };
  spec?: { limits?: LimitRangeItem[]; [field: string]: unknown };
  [field: string]: unknown;
}

export interface ResourceQuota {
  metadata?: { name?: string; namespace?: string; [field: string]: unknown };
  spec?: { hard?: ResourceList; scopes?: string[]; scopeSelector?: unknown; [field: string]: unknown };
  /** Filled in by the quota controller; ResourceQuota admission decides from it. */
  status?: { hard?: ResourceList; used?: ResourceList; [field: string]: unknown };
  [field: string]: unknown;
}

/** What the rewrite knows of the rules of the pod's namespace. */
export type NamespaceRulesKnowledge =
  /** inject without any LimitRange or ResourceQuota given: nothing is checked, as before. */
  | { state: 'unchecked' }
  /** The webhook has not listed them (yet) or the namespace is not in its watch: never guess. */
  | { state: 'unknown'; namespace: string; why: string }
  | {
      state: 'known';
      namespace: string;
      limitRanges: readonly LimitRange[];
      resourceQuotas: readonly ResourceQuota[];
    };

/** One refusal the API server would give the pod: what `rewrite/admission-rules.ts` finds. */
export interface Violation {
  /** Names the check: the pod as it came and the patched pod failing the same check is not our doing. */
  key: string;
  /** The rule, named, and what it says (the API server's own wording where it has one). */
  message: string;
  /** The container the check is about, if one. */
  container?: string;
  /** The value it is about: `requests.cpu`, `limits.memory`... */
  field?: string;
}

/** `LimitRange "lr" (namespace "shop")`: how warnings name a rule. */
export function ruleName(kind: 'LimitRange' | 'ResourceQuota', object: LimitRange | ResourceQuota): string {
  const name = object.metadata?.name ?? '<unnamed>';
  const namespace = object.metadata?.namespace;
  return `${kind} "${name}"${namespace ? ` (namespace "${namespace}")` : ''}`;
}
