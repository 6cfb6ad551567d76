// kubelet's httpGet request rules as pure functions: what it sends (k8s pkg/probe/http/request.go) and which
// redirects it follows (pkg/probe/http/http.go RedirectChecker on top of Go's net/http Client.Do). No sockets
// here: http.ts does the I/O; http-outcome.ts judges the answer.

import type { HttpGetHandler } from '../table/types.js';
import { joinHostPort } from './result.js';

/** http.go maxRespBodyLength: at most 10 KiB of body is read; a longer body is cut, still Success. */
export const MAX_BODY_BYTES = 10 * 1024;
/** RedirectChecker: `if len(via) >= 10 { return errors.New("stopped after 10 redirects") }`. */
export const MAX_REDIRECTS = 10;

/** One GET of a probe run: the first, or one reached by following a redirect. */
export interface Hop {
  url: URL;
  /** The URL as messages show it. */
  href: string;
  /** Go's URL.Host: host:port as written, where the connection goes. */
  urlHost: string;
  /** Go's req.Host: a `Host` header from the table, or ''. */
  hostOverride: string;
  /** Canonical names -> values, in send order; Host is not among them. */
  headers: Record<string, string[]>;
}

export type HttpSpec = Pick<HttpGetHandler, 'scheme' | 'port' | 'path' | 'httpHeaders'>;

// RFC 9110 token characters: the only names Go's textproto canonicalises.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Go's textproto.CanonicalMIMEHeaderKey: `x-probe` -> `X-Probe`; a name that is no token is left alone. */
export function canonicalHeaderKey(name: string): string {
  if (!TOKEN.test(name)) return name;
  let out = '';
  let upper = true;
  for (const ch of name) {
    out += upper ? ch.toUpperCase() : ch.toLowerCase();
    upper = ch === '-';
  }
  return out;
}

// Host, User-Agent, Accept and Connection follow their own rules below; the framing headers Go's transport
// computes itself and never copies from req.Header (net/http request.go reqWriteExcludeHeader).
const NOT_COPIED = new Set([
  'Host',
  'User-Agent',
  'Accept',
  'Connection',
  'Content-Length',
  'Transfer-Encoding',
  'Trailer',
]);

function hasCloseToken(values: readonly string[]): boolean {
  return values.some((v) => v.split(',').some((token) => token.trim().toLowerCase() === 'close'));
}

/** The headers of the first GET, as request.go newProbeRequest and Go's transport put them on the wire. */
function probeHeaders(user: Map<string, string[]>, userAgent: string): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  // A table User-Agent replaces kube-probe/x.y; Go sends only its first value, and none when that is empty.
  const agent = user.has('User-Agent') ? user.get('User-Agent')?.[0] : userAgent;
  if (agent) headers['User-Agent'] = [agent];
  // request.go: Accept defaults to */*; a table value replaces it; an empty one removes the header.
  const accept = user.get('Accept') ?? ['*/*'];
  if (accept[0] !== '') headers.Accept = accept;
  for (const [name, values] of user) if (!NOT_COPIED.has(name)) headers[name] = values;
  // DisableKeepAlives: Go adds `Connection: close` unless the table's Connection already says close.
  const connection = user.get('Connection') ?? [];
  headers.Connection = hasCloseToken(connection) ? connection : [...connection, 'close'];
  return headers;
}

/** The first GET of a probe: `scheme://host:port/path` (query kept) with kubelet's headers. */
export function firstHop(spec: HttpSpec, host: string, userAgent: string): Hop {
  const urlHost = joinHostPort(host, spec.port);
  // request.go formatURL: the path is a reference on the target; Go puts an empty or relative one under `/`.
  const path = spec.path.startsWith('/') ? spec.path : `/${spec.path}`;
  const href = `${spec.scheme === 'HTTPS' ? 'https' : 'http'}://${urlHost}${path}`;
  // http.Header.Add canonicalises names; repeated names keep every value, in order.
  const user = new Map<string, string[]>();
  for (const { name, value } of spec.httpHeaders) {
    const key = canonicalHeaderKey(name);
    user.set(key, [...(user.get(key) ?? []), value]);
  }
  const hostOverride = user.get('Host')?.[0] ?? '';
  return { url: new URL(href), href, urlHost, hostOverride, headers: probeHeaders(user, userAgent) };
}

/** What goes out as Host (HTTP/1.1) or :authority (HTTP/2): Go's req.Host, else URL.Host. */
export function authority(hop: Hop): string {
  return hop.hostOverride || hop.urlHost;
}

/** HTTP/1.1 request headers for node:http, Host first. */
export function h1Headers(hop: Hop): Record<string, string[]> {
  return { Host: [authority(hop)], ...hop.headers };
}

// RFC 9113 8.2.2: connection-specific fields are malformed in HTTP/2; Go's h2 transport leaves them out.
const NOT_IN_H2 = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** HTTP/2 request headers for node:http2: pseudo-headers, then lower-case names. */
export function h2Headers(hop: Hop): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {
    ':method': 'GET',
    ':scheme': 'https',
    ':authority': authority(hop),
    ':path': `${hop.url.pathname}${hop.url.search}`,
  };
  for (const [name, values] of Object.entries(hop.headers)) {
    const lower = name.toLowerCase();
    if (NOT_IN_H2.has(lower) || (lower === 'te' && values.join() !== 'trailers')) continue;
    out[lower] = values.length === 1 ? (values[0] as string) : values;
  }
  return out;
}

// Go's Client.Do follows only these (client.go redirectBehavior); 300, 304, 305, 306 come back as they are.
const FOLLOWED = new Set([301, 302, 303, 307, 308]);
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Go's URL.Host of a Location as url.Parse reads it: the authority of an absolute or `//` reference
 * ('' when a scheme has none), or undefined for a relative reference, which keeps the current host.
 */
export function locationHost(location: string): string | undefined {
  const scheme = SCHEME.exec(location);
  const rest = scheme ? location.slice(scheme[0].length) : location;
  if (!rest.startsWith('//') || (!scheme && rest.startsWith('///'))) return scheme ? '' : undefined;
  const authority = rest.slice(2).split(/[/?#]/, 1)[0] ?? '';
  return authority.slice(authority.lastIndexOf('@') + 1);
}

/** Go's URL.Hostname(): the host without port or IPv6 brackets. */
export function hostnameOf(urlHost: string): string {
  const colon = urlHost.lastIndexOf(':');
  const host = colon !== -1 && /^:\d*$/.test(urlHost.slice(colon)) ? urlHost.slice(0, colon) : urlHost;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** What to do with an answer: judge it, follow its redirect, or fail the probe. */
export type NextStep =
  | { kind: 'final'; note?: string }
  | { kind: 'follow'; hop: Hop }
  | { kind: 'fail'; reason: string };

/** Go's Client.Do redirect loop with kubelet's RedirectChecker, for the answer to `hop`. */
export function nextStep(
  first: Hop,
  hop: Hop,
  status: number,
  location: string | undefined,
  followed: number,
): NextStep {
  if (!FOLLOWED.has(status)) return { kind: 'final' };
  // client.go: "3xx responses without a Location have been observed in the wild": returned as they are.
  if (!location) return { kind: 'final', note: 'no Location to follow' };
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    return { kind: 'fail', reason: `failed to parse Location header ${JSON.stringify(location)}` };
  }
  const urlHost = locationHost(location) ?? hop.urlHost;
  // RedirectChecker: `req.URL.Hostname() != via[0].URL.Hostname()` -> ErrUseLastResponse: the 3xx is the
  // answer (Warning). Port and scheme may change. The WHATWG reading must agree too: we never dial elsewhere.
  if (hostnameOf(urlHost) !== hostnameOf(first.urlHost) || url.hostname !== first.url.hostname) {
    return { kind: 'final', note: `redirect to ${url.href} not followed: other host` };
  }
  if (followed + 1 >= MAX_REDIRECTS) {
    return { kind: 'fail', reason: `stopped after ${MAX_REDIRECTS} redirects (last: ${url.href})` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      kind: 'fail',
      reason: `unsupported protocol scheme ${JSON.stringify(url.protocol.slice(0, -1))}`,
    };
  }
  // client.go: a Host override survives only a relative Location (golang/go#22233).
  const hostOverride = SCHEME.test(location) ? '' : hop.hostOverride;
  // client.go copies the first request's headers and sets Referer to the previous URL, unless the table set
  // one or the redirect goes from https to http.
  const headers = { ...first.headers };
  if (!headers.Referer && !(hop.url.protocol === 'https:' && url.protocol === 'http:')) {
    headers.Referer = [`${hop.url.origin}${hop.url.pathname}${hop.url.search}`];
  }
  return { kind: 'follow', hop: { url, href: url.href, urlHost, hostOverride, headers } };
}

/** client.go maxBodySlurpSize: Go reads up to 2 KiB of a redirect's body (if no longer) before following. */
export function redirectBodyBytes(contentLength: string | undefined): number {
  const slurp = 2 << 10;
  return contentLength === undefined || Number(contentLength) <= slurp ? slurp : 0;
}
