// Ports on the command line. Lists and ranges, "15904,15901-15903" -> merged ranges -> "15901-15904": `init
// --ports` hands them to the init script; `serve --allowed-ports` checks header-driven targets against them. And
// the companion's four listen ports (`serve --ports`, `wait --ports`, `check --ports`).

import { describeValue } from './errors.js';
import { badFlagValue, usageError } from './flags.js';
import { LISTENER_ROLES, type ListenerRole, PORT_RANGE } from './scheme.js';

export interface PortRange {
  first: number;
  last: number;
}

/** The companion's four ports, 15901-15904 (src/scheme.ts). */
export const DEFAULT_INIT_PORTS: readonly PortRange[] = [{ first: PORT_RANGE.first, last: PORT_RANGE.last }];

const ITEM = /^(\d{1,5})(?:-(\d{1,5}))?$/;

/** What --ports/--allowed-ports take, in every error about them. */
const RANGES_ACCEPTED = 'ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000';

function port(text: string, item: string, flag: string): number {
  const n = Number(text);
  if (text.startsWith('0') || n > 65535) {
    const where = text === item ? '' : ` in ${describeValue(item)}`;
    throw usageError(`${flag} ${describeValue(text)}${where} is not a port`, RANGES_ACCEPTED);
  }
  return n;
}

/**
 * Comma-separated ports and ranges (`15901-15904,16000`), sorted, with overlapping and adjacent ranges merged
 * so the script writes one rule per range. Anything else is a UsageError naming the bad item.
 */
export function parsePortRanges(text: string, flag = '--ports'): PortRange[] {
  if (text.trim() === '') throw usageError(`${flag} is empty`, RANGES_ACCEPTED);
  const ranges = text.split(',').map((raw) => {
    const item = raw.trim();
    const match = ITEM.exec(item);
    if (match === null) {
      const where = item === text.trim() ? '' : ` in ${describeValue(text)}`;
      throw usageError(`${flag} ${describeValue(item)}${where} is not a port or a range`, RANGES_ACCEPTED);
    }
    const first = port(match[1] ?? '', item, flag);
    const last = match[2] === undefined ? first : port(match[2], item, flag);
    if (first > last) {
      throw usageError(
        `${flag} range ${describeValue(item)} runs backwards`,
        'a range runs low-high, e.g. 15901-15904',
      );
    }
    return { first, last };
  });
  ranges.sort((a, b) => a.first - b.first);
  const merged: PortRange[] = [];
  for (const range of ranges) {
    const previous = merged.at(-1);
    if (previous !== undefined && range.first <= previous.last + 1) {
      previous.last = Math.max(previous.last, range.last);
    } else {
      merged.push({ ...range });
    }
  }
  return merged;
}

/** Every port the ranges cover. */
export function portSet(ranges: readonly PortRange[]): Set<number> {
  const ports = new Set<number>();
  for (const { first, last } of ranges) for (let p = first; p <= last; p++) ports.add(p);
  return ports;
}

/** The script's `--ports` syntax: `15901-15904,16000`. */
export function formatPortRanges(ranges: readonly PortRange[]): string {
  return ranges.map((r) => (r.first === r.last ? `${r.first}` : `${r.first}-${r.last}`)).join(',');
}

/**
 * `serve --ports` / `wait --ports` / `check --ports`: liveness,readiness,startup,healthcheck; 0 lets the system
 * choose (tests). `field` names where the text came from (`--ports`, `env OSM_HEALTHCHECK_PORTS`).
 */
export function parseListenPorts(text: string, field = '--ports'): Record<ListenerRole, number> {
  const items = text.split(',').map((s) => s.trim());
  const numbers = items.map(Number);
  if (items.length !== 4 || numbers.some((n, i) => !/^\d+$/.test(items[i] ?? '') || n > 65535)) {
    throw badFlagValue(field, text, 'four ports 0-65535: liveness,readiness,startup,healthcheck');
  }
  return Object.fromEntries(LISTENER_ROLES.map((role, i) => [role, numbers[i]])) as Record<
    ListenerRole,
    number
  >;
}
