// Reads osm-edge's header conventions on /osm-healthcheck into a probe target, or says exactly what is wrong.
// `Original-Tcp-Port: N` (a rewritten tcpSocket probe) or `Original-Http-Port: N` [+ `Original-Http-Path`].

import {
  HEALTHCHECK_PATH,
  HTTP_PATH_HEADER,
  HTTP_PORT_HEADER,
  isCompanionPort,
  TCP_PORT_HEADER,
} from './scheme.js';

export type HeaderTarget =
  | { type: 'tcp'; port: number }
  | { type: 'http'; port: number; path: string }
  /** A companion route wrapped by osm-edge's injector: serve that route as if kubelet had called it. */
  | { type: 'self'; path: string };

export type HeaderParse = { ok: true; target: HeaderTarget } | { ok: false; reason: string };

/** Node's `request.headersDistinct`: lower-case name -> every value received, in order. */
export type DistinctHeaders = Readonly<Record<string, readonly string[] | undefined>>;

// Decimal digits only, no sign, no leading zero: what a port number written by an injector looks like.
// (Leading/trailing spaces never reach us: HTTP parsers strip optional whitespace around field values.)
const PORT_TEXT = /^[1-9][0-9]{0,4}$/;
const EXPECTED = `expected "${TCP_PORT_HEADER}: <port>" or "${HTTP_PORT_HEADER}: <port>" with optional "${HTTP_PATH_HEADER}: /<path>"`;

// Lower-case names, worked out once: these run on every /osm-healthcheck request.
const TCP_KEY = TCP_PORT_HEADER.toLowerCase();
const HTTP_KEY = HTTP_PORT_HEADER.toLowerCase();
const PATH_KEY = HTTP_PATH_HEADER.toLowerCase();
const LENGTHS = new Set([TCP_KEY.length, HTTP_KEY.length, PATH_KEY.length]);
const ABSENT: { value?: string; reason?: string } = Object.freeze({});

/**
 * The Original-* headers of node's `request.rawHeaders` ([name, value, name, value, ...]) in DistinctHeaders
 * form. Cheaper than `headersDistinct`, which copies every header of every request on the hot path.
 */
export function originalHeaders(rawHeaders: readonly string[]): DistinctHeaders {
  const found: Record<string, string[]> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    // Skip other headers by their length, without lower-casing them.
    if (!LENGTHS.has(name.length)) continue;
    const lower = name.toLowerCase();
    if (lower !== TCP_KEY && lower !== HTTP_KEY && lower !== PATH_KEY) continue;
    const value = rawHeaders[i + 1] as string;
    const seen = found[lower];
    if (seen === undefined) found[lower] = [value];
    else seen.push(value);
  }
  return found;
}

function single(headers: DistinctHeaders, name: string, key: string): { value?: string; reason?: string } {
  const values = headers[key];
  if (values === undefined) return ABSENT;
  if (values.length > 1)
    return { reason: `header ${name} is repeated (${values.length} times); send it once` };
  return { value: values[0] };
}

function port(name: string, value: string): { port?: number; reason?: string } {
  const n = Number(value);
  if (!PORT_TEXT.test(value) || n > 65535) {
    return { reason: `header ${name} must be a port number 1-65535, got ${JSON.stringify(value)}` };
  }
  return { port: n };
}

function tcpTarget(value: string): HeaderParse {
  const parsed = port(TCP_PORT_HEADER, value);
  return parsed.port === undefined
    ? { ok: false, reason: `${parsed.reason}; ${EXPECTED}` }
    : { ok: true, target: { type: 'tcp', port: parsed.port } };
}

export function parseOriginalHeaders(headers: DistinctHeaders): HeaderParse {
  const tcp = single(headers, TCP_PORT_HEADER, TCP_KEY);
  const http = single(headers, HTTP_PORT_HEADER, HTTP_KEY);
  const path = single(headers, HTTP_PATH_HEADER, PATH_KEY);
  const repeated = tcp.reason ?? http.reason ?? path.reason;
  if (repeated !== undefined) return { ok: false, reason: repeated };

  // osm-edge's injector wraps every probe it finds, ours included (pkg/injector/health_probes.go): a probe inject
  // pointed at /osm-<kind>-probe/<c> comes back as Original-Http-Port: 1590x + Original-Http-Path: that path, and
  // our tcpSocket rewrite keeps its Original-Tcp-Port and gains Original-Http-Port: 15904 + /osm-healthcheck.
  // Both name the companion itself: unwrap them, so the injectors may run in either order.
  if (http.value !== undefined && isCompanionPort(Number(http.value)) && PORT_TEXT.test(http.value)) {
    const wrapped = path.value ?? '/';
    if (wrapped.split('?')[0] !== HEALTHCHECK_PATH)
      return { ok: true, target: { type: 'self', path: wrapped } };
    if (tcp.value === undefined) {
      return {
        ok: false,
        reason: `${HTTP_PORT_HEADER} names this companion's ${HEALTHCHECK_PATH} itself; ${EXPECTED}`,
      };
    }
    return tcpTarget(tcp.value);
  }
  if (tcp.value !== undefined && http.value !== undefined) {
    return { ok: false, reason: `send either ${TCP_PORT_HEADER} or ${HTTP_PORT_HEADER}, not both` };
  }
  if (tcp.value !== undefined) {
    if (path.value !== undefined) {
      return {
        ok: false,
        reason: `${HTTP_PATH_HEADER} goes with ${HTTP_PORT_HEADER}, not ${TCP_PORT_HEADER}`,
      };
    }
    return tcpTarget(tcp.value);
  }
  if (http.value !== undefined) {
    const parsed = port(HTTP_PORT_HEADER, http.value);
    if (parsed.port === undefined) return { ok: false, reason: `${parsed.reason}; ${EXPECTED}` };
    const target = path.value ?? '/';
    if (!target.startsWith('/') || /[\s\0]/.test(target)) {
      return {
        ok: false,
        reason: `header ${HTTP_PATH_HEADER} must be an absolute path such as /healthz, got ${JSON.stringify(target)}`,
      };
    }
    return { ok: true, target: { type: 'http', port: parsed.port, path: target } };
  }
  if (path.value !== undefined) {
    return { ok: false, reason: `${HTTP_PATH_HEADER} needs ${HTTP_PORT_HEADER}; ${EXPECTED}` };
  }
  return { ok: false, reason: `no target port given; ${EXPECTED}` };
}
