// One workload's fixes as one change per container, for one patch per workload: every finding's fields
// together, and a field that several findings set, once, at the value that clears each of them. Pure.

import { isObject } from '../../json.js';
import type { ProbeChange } from './finding.js';

/** One container's change: where it is in the pod spec, and the probe fields to set. */
export interface ContainerChange {
  list: 'containers' | 'initContainers';
  container: string;
  change: ProbeChange;
}

/**
 * The probe fields a fix lowers: liveness' initialDelaySeconds, to 0 behind a startup probe. Every other number a
 * fix sets is a budget or a timeout it raises (failureThreshold, timeoutSeconds, periodSeconds of a probe it adds),
 * so the larger value clears both findings.
 */
const LOWERED: ReadonlySet<string> = new Set(['initialDelaySeconds']);

/** Two changes of one probe: numbers combined field by field; a handler (an object, or null) as first set. */
function mergeProbe(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...a };
  for (const [field, value] of Object.entries(b)) {
    const seen = merged[field];
    if (typeof seen === 'number' && typeof value === 'number')
      merged[field] = LOWERED.has(field) ? Math.min(seen, value) : Math.max(seen, value);
    // A handler is whole: only shared-dependency swaps one, and the probe it adds elsewhere copies the same.
    else if (!(field in merged)) merged[field] = value;
  }
  return merged;
}

/** The changes of one workload's findings, merged per container, in the order the containers first appear. */
export function mergeChanges(changes: readonly ContainerChange[]): ContainerChange[] {
  const by = new Map<string, ContainerChange>();
  for (const { list, container, change } of changes) {
    const key = `${list}/${container}`;
    const seen = by.get(key) ?? { list, container, change: {} };
    const merged: Record<string, unknown> = { ...seen.change };
    for (const [probe, fields] of Object.entries(change)) {
      const before = merged[probe];
      merged[probe] = isObject(before) && isObject(fields) ? mergeProbe(before, fields) : (before ?? fields);
    }
    by.set(key, { list, container, change: merged as ProbeChange });
  }
  return [...by.values()];
}
