// A Kubernetes label selector (matchLabels, matchExpressions: In, NotIn, Exists, DoesNotExist) against labels,
// as apimachinery's LabelSelectorAsSelector reads it: the webhook's namespaceSelector and objectSelector decide
// which pods it ever sees. An empty selector matches everything; a selector it cannot read matches nothing.

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (selector === undefined) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const value = labels[key];
    const ok =
      operator === 'In'
        ? has && values.includes(String(value))
        : operator === 'NotIn'
          ? !has || !values.includes(String(value))
          : operator === 'Exists'
            ? has
            : operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

/** `key=value,key in (a,b),!key`: a selector in the API's `labelSelector` syntax ("" selects everything). */
export function selectorQuery(selector: LabelSelector | undefined): string {
  const parts = [
    ...Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(selector?.matchExpressions ?? []).map(({ key, operator, values = [] }) =>
      operator === 'Exists'
        ? key
        : operator === 'DoesNotExist'
          ? `!${key}`
          : `${key} ${operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`,
    ),
  ];
  return parts.join(',');
}
