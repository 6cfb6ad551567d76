// The rule behind /osm-healthcheck, table by table: with a probe table exactly its probes, run as the table's
// entries; without one, what the headers name within --allowed-ports.

import { describe, expect, it } from 'vitest';
import { type HeaderRequest, headerRule } from '../../src/server/header-probes.js';
import { parseProbeTable } from '../../src/table/parse.js';

const table = parseProbeTable({
  liveness: {
    app: {
      httpGet: { port: 8080, path: '/healthz', httpHeaders: [{ name: 'Host', value: 'app.local' }] },
      timeoutSeconds: 2,
    },
  },
  readiness: {
    app: { httpGet: { port: 8443, path: '/ready?full=1', scheme: 'HTTPS' }, timeoutSeconds: 3 },
    side: { httpGet: { port: 8080, path: '/healthz' }, timeoutSeconds: 7 },
    rpc: { grpc: { port: 9090 } },
  },
  startup: { app: { tcpSocket: { port: 5432 }, timeoutSeconds: 4 } },
});
const rule = headerRule(table, new Set([1, 2, 3]));

describe('with a probe table', () => {
  it.each([
    {
      name: 'the HTTP probe, as the table entry with its Host header and the longest timeout of its two entries',
      request: { type: 'http', port: 8080, path: '/healthz' },
      handler: { scheme: 'HTTP', httpHeaders: [{ name: 'Host', value: 'app.local' }] },
      timeoutSeconds: 7,
    },
    {
      name: 'the HTTPS probe named by Original-Http-Port, run as HTTPS, query and all',
      request: { type: 'http', port: 8443, path: '/ready?full=1' },
      handler: { scheme: 'HTTPS', path: '/ready?full=1' },
      timeoutSeconds: 3,
    },
    {
      name: 'the tcpSocket probe',
      request: { type: 'tcp', port: 5432 },
      handler: { type: 'tcpSocket', port: 5432 },
      timeoutSeconds: 4,
    },
  ] as const)('runs $name', ({ request, handler, timeoutSeconds }) => {
    const run = rule.resolve(request as HeaderRequest);
    expect(run).toMatchObject({ ok: true, handler, timeoutSeconds });
  });

  it.each([
    { name: 'another path on a probe port', request: { type: 'http', port: 8080, path: '/admin/secret' } },
    { name: 'a doubled slash', request: { type: 'http', port: 8080, path: '//healthz' } },
    { name: 'a trailing slash', request: { type: 'http', port: 8080, path: '/healthz/' } },
    { name: 'an encoded slash', request: { type: 'http', port: 8080, path: '/%2Fhealthz' } },
    { name: 'a dot segment', request: { type: 'http', port: 8080, path: '/healthz/../admin' } },
    { name: 'another case', request: { type: 'http', port: 8080, path: '/HEALTHZ' } },
    { name: 'an added query', request: { type: 'http', port: 8080, path: '/healthz?x=1' } },
    { name: 'the query dropped', request: { type: 'http', port: 8443, path: '/ready' } },
    { name: 'a probe path on another probe port', request: { type: 'http', port: 5432, path: '/healthz' } },
    { name: 'a port the table lacks', request: { type: 'http', port: 22, path: '/healthz' } },
    { name: 'TCP to an HTTP probe port', request: { type: 'tcp', port: 8080 } },
    { name: 'TCP to an HTTPS probe port', request: { type: 'tcp', port: 8443 } },
    { name: 'TCP to a gRPC probe port', request: { type: 'tcp', port: 9090 } },
    { name: 'TCP to a port the flag allows (a table overrides it)', request: { type: 'tcp', port: 1 } },
  ] as const)('refuses $name, naming exactly what is allowed', ({ request }) => {
    const run = rule.resolve(request as HeaderRequest);
    expect(run.ok).toBe(false);
    expect(!run.ok && run.reason).toBe(
      `${request.type === 'tcp' ? `Original-Tcp-Port ${request.port}` : `Original-Http-Port ${request.port} + Original-Http-Path ${JSON.stringify(request.path)}`} is none of the probe table's probes; allowed: Original-Http-Port 8080 + Original-Http-Path "/healthz"; Original-Http-Port 8443 + Original-Http-Path "/ready?full=1"; Original-Tcp-Port 5432`,
    );
  });

  it('says a table of gRPC probes alone lets nothing through', () => {
    const grpcOnly = headerRule(parseProbeTable({ liveness: { a: { grpc: { port: 9090 } } } }), undefined);
    expect(grpcOnly.reach).toBe('none (the probe table has no httpGet or tcpSocket probe)');
    expect(grpcOnly.resolve({ type: 'tcp', port: 9090 }).ok).toBe(false);
  });
});

describe('without a probe table (the osm-edge drop-in)', () => {
  it('runs any port and path the headers name, as plain HTTP with kubelet default timeout', () => {
    const open = headerRule(undefined, undefined);
    expect(open.reach).toBe('any port, any path');
    expect(open.resolve({ type: 'http', port: 22, path: '/anything' })).toEqual({
      ok: true,
      handler: { type: 'httpGet', scheme: 'HTTP', port: 22, path: '/anything', httpHeaders: [] },
      timeoutSeconds: 1,
    });
  });

  it('keeps to --allowed-ports', () => {
    const narrowed = headerRule(undefined, new Set([9000, 8080]));
    expect(narrowed.reach).toBe('ports 8080, 9000 (--allowed-ports), any path');
    expect(narrowed.resolve({ type: 'tcp', port: 8080 }).ok).toBe(true);
    expect(narrowed.resolve({ type: 'tcp', port: 22 })).toEqual({
      ok: false,
      reason: 'port 22 is not allowed; allowed ports: 8080, 9000',
    });
  });
});
