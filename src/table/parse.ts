// Validates a probe table document once, at start-up, and fails closed (docs/architecture.md#the-probe-table).
// After this, nothing downstream needs to re-check a field.

import { describeValue, TableError } from '../errors.js';
import { isObject, type Json } from '../json.js';
import { isProbeKind, PROBE_KINDS, type ProbeKind } from '../scheme.js';
import type { HttpHeader, ProbeEntry, ProbeHandler, ProbeTable } from './types.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// RFC 9110 token: what a header field name may contain.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HANDLERS = ['httpGet', 'tcpSocket', 'grpc'] as const;
const ENTRY_FIELDS = new Set<string>([...HANDLERS, 'timeoutSeconds']);

function object(value: unknown, path: string): Json {
  if (!isObject(value)) throw new TableError(path, `must be an object, got ${describeValue(value)}`);
  return value;
}

function port(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
    throw new TableError(path, `must be an integer 1-65535, got ${describeValue(value)}`);
  }
  return value;
}

function optionalString(value: unknown, path: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new TableError(path, `must be a string, got ${describeValue(value)}`);
  return value;
}

function rejectUnknown(obj: Json, known: ReadonlySet<string>, path: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.has(key)) {
      throw new TableError(`${path}.${key}`, `unknown field (expected one of ${[...known].join(', ')})`);
    }
  }
}

function headers(value: unknown, path: string): HttpHeader[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TableError(path, `must be an array, got ${describeValue(value)}`);
  return value.map((item, i) => {
    const at = `${path}[${i}]`;
    const header = object(item, at);
    rejectUnknown(header, new Set(['name', 'value']), at);
    const { name, value: headerValue } = header;
    if (typeof name !== 'string' || !HEADER_NAME.test(name)) {
      throw new TableError(`${at}.name`, `must be an HTTP header name, got ${describeValue(name)}`);
    }
    if (typeof headerValue !== 'string' || /[\r\n\0]/.test(headerValue)) {
      throw new TableError(
        `${at}.value`,
        `must be a string without CR, LF or NUL, got ${describeValue(headerValue)}`,
      );
    }
    return { name, value: headerValue };
  });
}

function handler(name: (typeof HANDLERS)[number], value: unknown, path: string): ProbeHandler {
  const at = `${path}.${name}`;
  const spec = object(value, at);
  switch (name) {
    case 'httpGet': {
      rejectUnknown(spec, new Set(['path', 'port', 'scheme', 'httpHeaders', 'host']), at);
      if (spec.host !== undefined) {
        throw new TableError(`${at}.host`, 'is not supported: a probe with a host is not rewritten');
      }
      const scheme = spec.scheme ?? 'HTTP';
      if (scheme !== 'HTTP' && scheme !== 'HTTPS') {
        throw new TableError(`${at}.scheme`, `must be "HTTP" or "HTTPS", got ${describeValue(scheme)}`);
      }
      const rawPath = optionalString(spec.path, `${at}.path`, '/');
      if (/[\s\0]/.test(rawPath)) {
        throw new TableError(`${at}.path`, `must not contain whitespace, got ${describeValue(rawPath)}`);
      }
      // kubelet parses the path as a URL reference relative to the target; an empty path means "/".
      const path_ = rawPath.startsWith('/') ? rawPath : `/${rawPath}`;
      return {
        type: 'httpGet',
        scheme,
        port: port(spec.port, `${at}.port`),
        path: path_,
        httpHeaders: headers(spec.httpHeaders, `${at}.httpHeaders`),
      };
    }
    case 'tcpSocket':
      rejectUnknown(spec, new Set(['port', 'host']), at);
      if (spec.host !== undefined) {
        throw new TableError(`${at}.host`, 'is not supported: a probe with a host is not rewritten');
      }
      return { type: 'tcpSocket', port: port(spec.port, `${at}.port`) };
    case 'grpc':
      rejectUnknown(spec, new Set(['port', 'service']), at);
      return {
        type: 'grpc',
        port: port(spec.port, `${at}.port`),
        service: optionalString(spec.service, `${at}.service`, ''),
      };
    default: {
      const unreachable: never = name;
      throw new Error(`unhandled probe handler ${String(unreachable)}`);
    }
  }
}

function entry(kind: ProbeKind, container: string, value: unknown): ProbeEntry {
  const path = `${kind}.${container}`;
  const spec = object(value, path);
  rejectUnknown(spec, ENTRY_FIELDS, path);
  const present = HANDLERS.filter((name) => spec[name] !== undefined);
  if (present.length !== 1) {
    throw new TableError(
      path,
      `must have exactly one of httpGet, tcpSocket, grpc, got ${present.length === 0 ? 'none' : present.join(' and ')}`,
    );
  }
  const timeout = spec.timeoutSeconds ?? 1;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1) {
    throw new TableError(`${path}.timeoutSeconds`, `must be an integer >= 1, got ${describeValue(timeout)}`);
  }
  // biome-ignore lint/style/noNonNullAssertion: present.length === 1 was checked above
  const name = present[0]!;
  return { kind, container, handler: handler(name, spec[name], path), timeoutSeconds: timeout };
}

/** Validates a parsed JSON value as a probe table; throws TableError naming the offending key path. */
export function parseProbeTable(value: unknown): ProbeTable {
  const doc = object(value, '');
  const table = { liveness: new Map(), readiness: new Map(), startup: new Map() } satisfies Record<
    ProbeKind,
    Map<string, ProbeEntry>
  >;
  for (const [kind, containers] of Object.entries(doc)) {
    if (!isProbeKind(kind)) {
      throw new TableError(kind, `unknown probe kind (expected one of ${PROBE_KINDS.join(', ')})`);
    }
    for (const [container, spec] of Object.entries(object(containers, kind))) {
      if (container.length > 63 || !DNS1123_LABEL.test(container)) {
        throw new TableError(
          `${kind}.${container}`,
          'container name must be a DNS-1123 label (lower-case letters, digits and "-", at most 63)',
        );
      }
      table[kind].set(container, entry(kind, container, spec));
    }
  }
  return table;
}

/** Parses the JSON text of a table; `source` names where it came from for the error message. */
export function parseProbeTableJson(text: string, source: string): ProbeTable {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TableError('', `${source} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  return parseProbeTable(value);
}

/** Every entry of the table, kind by kind. */
export function entries(table: ProbeTable): ProbeEntry[] {
  return PROBE_KINDS.flatMap((kind) => [...table[kind].values()]);
}
