// What is kept of a namespace: the Pod Security level and version its labels enforce, as the PodSecurity admission
// plugin resolves them, whether the webhook keeps it from a watch or analyze reads it once.

import { isObject, type Json } from '../json.js';
import { type EnforcedPolicy, enforcedPolicy, type PodSecurityLevel } from '../rewrite/pod-security.js';

function labelsOf(object: Json): Record<string, string> {
  const labels = isObject(object.metadata) ? object.metadata.labels : undefined;
  if (!isObject(labels)) return {};
  return Object.fromEntries(
    Object.entries(labels).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** What is kept of a namespace: the level and version its Pod Security labels enforce, nothing else of it. */
export function keptNamespace(object: Json, name: string, defaultLevel: PodSecurityLevel): EnforcedPolicy {
  return enforcedPolicy(labelsOf(object), defaultLevel, name);
}
