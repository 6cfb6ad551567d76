// The target of a probe osm-edge's injector already rewrote: GET /osm-healthcheck on a companion port with the
// app's port (and path) in Original-* headers. Read with the companion's own header parser, so inject records
// exactly the target serve will be asked for, and the two cannot disagree.

import { type HeaderParse, parseOriginalHeaders } from '../original-headers.js';
import { HEALTHCHECK_PATH, HTTP_PORT_HEADER, isCompanionPort, TCP_PORT_HEADER } from '../scheme.js';
import type { HTTPGetAction } from './types.js';

export type OriginalTarget =
  /** Not a `/osm-healthcheck` probe. */
  | { found: 'none' }
  /**
   * A header names a companion port: osm-edge's injector wrapped a probe that already pointed at the companion
   * (its health_probes.go rewrites every probe it finds, 15901-15904 included), e.g. when it ran after us.
   */
  | { found: 'wrapped' }
  | { found: 'headers'; parse: HeaderParse };

export function originalTarget(action: HTTPGetAction): OriginalTarget {
  const path = typeof action.path === 'string' ? action.path.split('?')[0] : undefined;
  if (path !== HEALTHCHECK_PATH) return { found: 'none' };
  const headers: Record<string, string[]> = {};
  for (const header of Array.isArray(action.httpHeaders) ? action.httpHeaders : []) {
    if (typeof header?.name !== 'string' || typeof header.value !== 'string') continue;
    // As they reach serve: names are case-insensitive, and HTTP parsers strip whitespace around values.
    const name = header.name.toLowerCase();
    headers[name] = [...(headers[name] ?? []), header.value.trim()];
  }
  const ports = [TCP_PORT_HEADER, HTTP_PORT_HEADER].flatMap((name) => headers[name.toLowerCase()] ?? []);
  if (ports.some((value) => /^\d+$/.test(value) && isCompanionPort(Number(value))))
    return { found: 'wrapped' };
  return { found: 'headers', parse: parseOriginalHeaders(headers) };
}
