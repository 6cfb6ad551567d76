// Which probe a header-driven request (`/osm-healthcheck` + Original-*) runs. With a probe table: exactly one of
// the table's probes, run AS that entry (its scheme, headers and timeout), so a caller can only ever get the answer
// kubelet's own probe gets (docs/security.md). Without one (the osm-edge drop-in): what the headers name, on any
// port or the ports --allowed-ports lets through. Pure; test/server/header-probes.test.ts covers each rule.

import type { HeaderTarget } from '../original-headers.js';
import { HTTP_PATH_HEADER, HTTP_PORT_HEADER, TCP_PORT_HEADER } from '../scheme.js';
import { entries } from '../table/parse.js';
import type { HttpGetHandler, ProbeTable, TcpSocketHandler } from '../table/types.js';

/** What the headers name: a TCP connect or an HTTP GET (osm-edge's wrap of a companion path is not one). */
export type HeaderRequest = Exclude<HeaderTarget, { type: 'self' }>;

export type HeaderRun =
  | { ok: true; handler: HttpGetHandler | TcpSocketHandler; timeoutSeconds: number }
  | { ok: false; reason: string };

export interface HeaderRule {
  /** The probe this request runs, or why it runs none (a 403). */
  resolve(request: HeaderRequest): HeaderRun;
  /** Everything any caller can have the companion probe with these headers, in words. */
  reach: string;
}

// kubelet's default timeoutSeconds: a header-driven probe without a table has no entry to take one from.
const DEFAULT_TIMEOUT_SECONDS = 1;

export function headerRule(
  table: ProbeTable | undefined,
  allowedPorts: ReadonlySet<number> | undefined,
): HeaderRule {
  return table === undefined ? headersDecide(allowedPorts) : tableDecides(table);
}

const keyOf = (request: HeaderRequest): string =>
  request.type === 'tcp' ? `tcp ${request.port}` : `http ${request.port} ${request.path}`;

function named(request: HeaderRequest): string {
  return request.type === 'tcp'
    ? `${TCP_PORT_HEADER} ${request.port}`
    : `${HTTP_PORT_HEADER} ${request.port} + ${HTTP_PATH_HEADER} ${JSON.stringify(request.path)}`;
}

/**
 * The table's httpGet probes by port and path exactly as the table holds them (query included), its tcpSocket
 * probes by port. A tcpSocket header never names an httpGet probe's port: kubelet's rewritten tcpSocket probes
 * come only from tcpSocket entries (and osm-edge's HTTPS-as-TCP form gets a tcpSocket entry, rewrite/probe.ts
 * fromHeaders), so no injector needs it. Two entries with one key (liveness and readiness on /healthz) share one
 * run, since the request can't say which of them kubelet is running: the first entry's handler (its headers and
 * scheme: still a request the table makes) with the longest of their timeouts.
 */
function tableDecides(table: ProbeTable): HeaderRule {
  const runs = new Map<string, { handler: HttpGetHandler | TcpSocketHandler; timeoutSeconds: number }>();
  const allowed: string[] = [];
  for (const { handler, timeoutSeconds } of entries(table)) {
    if (handler.type === 'grpc') continue;
    const request: HeaderRequest =
      handler.type === 'tcpSocket'
        ? { type: 'tcp', port: handler.port }
        : { type: 'http', port: handler.port, path: handler.path };
    const key = keyOf(request);
    const seen = runs.get(key);
    if (seen !== undefined) seen.timeoutSeconds = Math.max(seen.timeoutSeconds, timeoutSeconds);
    else {
      runs.set(key, { handler, timeoutSeconds });
      allowed.push(named(request));
    }
  }
  const reach =
    allowed.length === 0 ? 'none (the probe table has no httpGet or tcpSocket probe)' : allowed.join('; ');
  return {
    reach,
    resolve: (request) => {
      const run = runs.get(keyOf(request));
      if (run !== undefined) return { ok: true, ...run };
      return {
        ok: false,
        reason: `${named(request)} is none of the probe table's probes; allowed: ${reach}`,
      };
    },
  };
}

/** osm-edge's contract: their injector writes any port and path into the headers. */
function headersDecide(allowedPorts: ReadonlySet<number> | undefined): HeaderRule {
  const list = allowedPorts === undefined ? '' : [...allowedPorts].sort((a, b) => a - b).join(', ');
  const reach =
    allowedPorts === undefined ? 'any port, any path' : `ports ${list || 'none'} (--allowed-ports), any path`;
  return {
    reach,
    resolve: (request) => {
      if (allowedPorts !== undefined && !allowedPorts.has(request.port)) {
        return { ok: false, reason: `port ${request.port} is not allowed; allowed ports: ${list || 'none'}` };
      }
      const handler: HttpGetHandler | TcpSocketHandler =
        request.type === 'tcp'
          ? { type: 'tcpSocket', port: request.port }
          : { type: 'httpGet', scheme: 'HTTP', port: request.port, path: request.path, httpHeaders: [] };
      return { ok: true, handler, timeoutSeconds: DEFAULT_TIMEOUT_SECONDS };
    },
  };
}
