import { describe, expect, it } from 'vitest';
import { passthroughPort, pathsFor, selectEntry } from '../../src/server/routing.js';
import { parseProbeTable } from '../../src/table/parse.js';

const table = parseProbeTable({
  liveness: {
    app: { httpGet: { port: 8080, path: '/live' }, timeoutSeconds: 3 },
    side: { httpGet: { port: 8443, scheme: 'HTTPS' } },
  },
  readiness: { app: { tcpSocket: { port: 8080 }, timeoutSeconds: 5 } },
  startup: {
    app: { httpGet: { port: 8443, scheme: 'HTTPS' } },
    web: { httpGet: { port: 9443, scheme: 'HTTPS' } },
  },
});

describe('selectEntry', () => {
  it.each([
    { name: 'named container', kind: 'liveness', container: 'side', want: 'side' },
    { name: 'the only container of a kind', kind: 'readiness', container: undefined, want: 'app' },
  ] as const)('finds $name', ({ kind, container, want }) => {
    const s = selectEntry(table, kind, container);
    expect(s.ok && s.entry.container).toBe(want);
  });

  it.each([
    {
      name: 'ambiguous bare path',
      kind: 'liveness',
      container: undefined,
      reason:
        '2 containers have a liveness probe, name one; known: /osm-liveness-probe/app, /osm-liveness-probe/side',
    },
    {
      name: 'unknown container',
      kind: 'readiness',
      container: 'db',
      reason: 'no readiness probe for container "db"; known: /osm-readiness-probe/app',
    },
  ] as const)('404s $name', ({ kind, container, reason }) => {
    expect(selectEntry(table, kind, container)).toEqual({ ok: false, status: 404, reason });
  });

  it('404s every kind without a table', () => {
    expect(selectEntry(undefined, 'startup')).toEqual({
      ok: false,
      status: 404,
      reason: 'no startup probe is configured; the probe table has none',
    });
  });
});

describe('pathsFor', () => {
  it.each([
    { role: 'readiness', want: ['/osm-readiness-probe', '/osm-readiness-probe/app', '/osm-healthcheck'] },
    { role: 'liveness', want: ['/osm-liveness-probe/app', '/osm-liveness-probe/side', '/osm-healthcheck'] },
    { role: 'healthcheck', want: ['/osm-healthcheck', '/healthz', '/metrics'] },
  ] as const)('lists what $role serves', ({ role, want }) => {
    expect(pathsFor(role, table)).toEqual(want);
  });
});

describe('passthroughPort', () => {
  it.each([
    { kind: 'liveness', want: 8443 },
    { kind: 'readiness', want: undefined },
    { kind: 'startup', want: undefined },
  ] as const)('$kind -> $want', ({ kind, want }) => {
    expect(passthroughPort(table, kind)).toBe(want);
  });
});
