// Pure decisions behind the routes: which table entry a path means, which paths a listener serves, and which
// app port a TLS connection goes to when passthrough is on (header-driven probes: header-probes.ts). No I/O here;
// test/server/routing.test.ts covers each rule with a table.

import {
  HEALTHCHECK_PATH,
  HEALTHZ_PATH,
  type ListenerRole,
  METRICS_PATH,
  PROBE_KINDS,
  type ProbeKind,
  probePath,
} from '../scheme.js';
import type { ProbeEntry, ProbeTable } from '../table/types.js';

export type Selection = { ok: true; entry: ProbeEntry } | { ok: false; status: 404; reason: string };

/** What a request path names: one of the routes of docs/architecture.md#serve-routes-and-verdicts, or nothing. */
export type Route =
  | { route: 'probe'; kind: ProbeKind; container: string | undefined }
  | { route: 'healthcheck' }
  | { route: 'healthz' };

const PROBE_ROUTES = new Map<string, ProbeKind>(PROBE_KINDS.map((kind) => [probePath(kind), kind]));

/**
 * `/osm-<kind>-probe[/<container>]`, `/osm-healthcheck` or `/healthz`; the path is matched as sent (query
 * already cut off), exactly and case-sensitively: a trailing slash or an extra segment names nothing.
 */
export function matchPath(path: string): Route | undefined {
  if (path === HEALTHCHECK_PATH) return { route: 'healthcheck' };
  if (path === HEALTHZ_PATH) return { route: 'healthz' };
  const slash = path.indexOf('/', 1);
  const kind = PROBE_ROUTES.get(slash < 0 ? path : path.slice(0, slash));
  if (kind === undefined) return undefined;
  if (slash < 0) return { route: 'probe', kind, container: undefined };
  const container = path.slice(slash + 1);
  if (container === '' || container.includes('/')) return undefined;
  return { route: 'probe', kind, container };
}

/** `/osm-<kind>-probe/<container>`, or `/osm-<kind>-probe` when exactly one container has that kind. */
export function selectEntry(table: ProbeTable | undefined, kind: ProbeKind, container?: string): Selection {
  const byContainer = table?.[kind] ?? new Map<string, ProbeEntry>();
  if (container !== undefined) {
    const entry = byContainer.get(container);
    if (entry !== undefined) return { ok: true, entry };
    return {
      ok: false,
      status: 404,
      reason: `no ${kind} probe for container "${container}"; ${known(kind, table)}`,
    };
  }
  if (byContainer.size === 1) {
    const [entry] = byContainer.values();
    if (entry !== undefined) return { ok: true, entry };
  }
  const why =
    byContainer.size === 0
      ? `no ${kind} probe is configured`
      : `${byContainer.size} containers have a ${kind} probe, name one`;
  return { ok: false, status: 404, reason: `${why}; ${known(kind, table)}` };
}

function known(kind: ProbeKind, table: ProbeTable | undefined): string {
  const paths = [...(table?.[kind].keys() ?? [])].map((c) => probePath(kind, c));
  return paths.length === 0 ? 'the probe table has none' : `known: ${paths.join(', ')}`;
}

/** Every path served on a listener of this role, for 404 answers. */
export function pathsFor(role: ListenerRole | undefined, table: ProbeTable | undefined): string[] {
  const kinds = role === undefined ? PROBE_KINDS : role === 'healthcheck' ? [] : [role];
  const paths: string[] = [];
  for (const kind of kinds) {
    const containers = [...(table?.[kind].keys() ?? [])];
    if (containers.length === 1) paths.push(probePath(kind));
    paths.push(...containers.map((c) => probePath(kind, c)));
  }
  paths.push(HEALTHCHECK_PATH);
  if (role === undefined || role === 'healthcheck') paths.push(HEALTHZ_PATH, METRICS_PATH);
  return paths;
}

/**
 * OSM's older convention: kubelet speaks TLS end to end to 15901-15903 and we pass the bytes through to the
 * kind's HTTPS probe port. Only well defined when that kind's HTTPS entries all use one port. Off unless serve's
 * --tls-passthrough asks for it: the pipe carries any method, path and body to the app (docs/security.md).
 */
export function passthroughPort(table: ProbeTable | undefined, kind: ProbeKind): number | undefined {
  const ports = new Set<number>();
  for (const entry of table?.[kind].values() ?? []) {
    if (entry.handler.type === 'httpGet' && entry.handler.scheme === 'HTTPS') ports.add(entry.handler.port);
  }
  return ports.size === 1 ? [...ports][0] : undefined;
}
