// Which table entries `check --kind ... --container ...` means. A filter that names nothing in the table, or
// filters that together select nothing, are usage errors listing what the table has.

import { describeValue } from '../errors.js';
import { badFlagValue, usageError } from '../flags.js';
import { isProbeKind, PROBE_KINDS, type ProbeKind } from '../scheme.js';
import { entries } from '../table/parse.js';
import type { ProbeEntry, ProbeTable } from '../table/types.js';

export interface Filters {
  /** `--kind` values as given: repeated flags and comma-separated lists both work. */
  kinds: readonly string[];
  containers: readonly string[];
}

function values(flags: readonly string[]): string[] {
  return flags.flatMap((flag) => flag.split(',')).map((value) => value.trim());
}

function parseKinds(flags: readonly string[]): ProbeKind[] {
  return values(flags).map((value) => {
    if (!isProbeKind(value)) {
      throw badFlagValue('--kind', value, PROBE_KINDS.join(', '));
    }
    return value;
  });
}

function describe(all: readonly ProbeEntry[]): string {
  return all.map((e) => `${e.kind} ${e.container}`).join(', ');
}

/** The entries the filters select, in table order (kind by kind); throws UsageError when that is none. */
export function selectEntries(table: ProbeTable, filters: Filters): ProbeEntry[] {
  const all = entries(table);
  if (all.length === 0) throw usageError('the probe table has no entries', 'a table with a probe to check');
  const kinds = parseKinds(filters.kinds);
  const containers = values(filters.containers);
  const known = new Set(all.map((e) => e.container));
  for (const container of containers) {
    if (!known.has(container)) {
      throw usageError(
        `--container ${describeValue(container)} is not in the probe table`,
        `its containers: ${[...known].join(', ')}`,
      );
    }
  }
  const selected = all.filter(
    (e) =>
      (kinds.length === 0 || kinds.includes(e.kind)) &&
      (containers.length === 0 || containers.includes(e.container)),
  );
  if (selected.length === 0) {
    const asked = [
      ...(kinds.length > 0 ? [`--kind ${kinds.join(',')}`] : []),
      ...(containers.length > 0 ? [`--container ${containers.join(',')}`] : []),
    ].join(' ');
    throw usageError(`${asked} selects no probe`, `the table has: ${describe(all)}`);
  }
  return selected;
}
