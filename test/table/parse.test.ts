import { describe, expect, it } from 'vitest';
import { TableError } from '../../src/errors.js';
import { entries, parseProbeTable, parseProbeTableJson } from '../../src/table/parse.js';

const designExample = {
  liveness: {
    app: {
      httpGet: { path: '/live', port: 14001, scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] },
      timeoutSeconds: 1,
    },
  },
  readiness: { app: { tcpSocket: { port: 14002 }, timeoutSeconds: 2 } },
  startup: { app: { grpc: { port: 14003, service: '' }, timeoutSeconds: 1 } },
};

describe('parseProbeTable', () => {
  it('accepts the docs/architecture.md example and keeps every field', () => {
    const table = parseProbeTable(designExample);
    expect(table.liveness.get('app')).toEqual({
      kind: 'liveness',
      container: 'app',
      timeoutSeconds: 1,
      handler: {
        type: 'httpGet',
        scheme: 'HTTP',
        port: 14001,
        path: '/live',
        httpHeaders: [{ name: 'X-Probe', value: '1' }],
      },
    });
    expect(table.readiness.get('app')?.handler).toEqual({ type: 'tcpSocket', port: 14002 });
    expect(table.startup.get('app')?.handler).toEqual({ type: 'grpc', port: 14003, service: '' });
    expect(entries(table).map((e) => `${e.kind}/${e.container}`)).toEqual([
      'liveness/app',
      'readiness/app',
      'startup/app',
    ]);
  });

  it.each([
    { name: 'timeout defaults to 1 s', entry: { tcpSocket: { port: 1 } }, field: 'timeoutSeconds', want: 1 },
    { name: 'scheme defaults to HTTP', entry: { httpGet: { port: 80 } }, field: 'scheme', want: 'HTTP' },
    { name: 'empty path means /', entry: { httpGet: { port: 80, path: '' } }, field: 'path', want: '/' },
    {
      name: 'relative path gets a /',
      entry: { httpGet: { port: 80, path: 'x?a=1' } },
      field: 'path',
      want: '/x?a=1',
    },
    { name: 'grpc service defaults to ""', entry: { grpc: { port: 9 } }, field: 'service', want: '' },
  ])('$name', ({ entry, field, want }) => {
    const parsed = parseProbeTable({ liveness: { app: entry } }).liveness.get('app');
    if (parsed === undefined) throw new Error('entry missing');
    const value = field === 'timeoutSeconds' ? parsed.timeoutSeconds : (parsed.handler as never)[field];
    expect(value).toBe(want);
  });

  it('accepts an empty table and empty kinds', () => {
    expect(entries(parseProbeTable({}))).toEqual([]);
    expect(entries(parseProbeTable({ readiness: {} }))).toEqual([]);
  });

  it.each([
    { name: 'not an object', doc: [], message: 'must be an object, got an array' },
    { name: 'unknown kind', doc: { livenes: {} }, message: 'livenes: unknown probe kind' },
    { name: 'kind not an object', doc: { liveness: 3 }, message: 'liveness: must be an object, got 3' },
    {
      name: 'bad container name',
      doc: { liveness: { App_1: { tcpSocket: { port: 1 } } } },
      message: 'liveness.App_1: container name must be a DNS-1123 label',
    },
    {
      name: 'no handler',
      doc: { liveness: { app: { timeoutSeconds: 1 } } },
      message: 'liveness.app: must have exactly one of httpGet, tcpSocket, grpc, got none',
    },
    {
      name: 'two handlers',
      doc: { liveness: { app: { tcpSocket: { port: 1 }, grpc: { port: 2 } } } },
      message: 'got tcpSocket and grpc',
    },
    {
      name: 'named port',
      doc: { liveness: { app: { httpGet: { port: 'http' } } } },
      message: 'liveness.app.httpGet.port: must be an integer 1-65535, got "http"',
    },
    {
      name: 'port 0',
      doc: { readiness: { app: { tcpSocket: { port: 0 } } } },
      message: 'readiness.app.tcpSocket.port: must be an integer 1-65535, got 0',
    },
    {
      name: 'port 65536',
      doc: { startup: { app: { grpc: { port: 65536 } } } },
      message: 'startup.app.grpc.port: must be an integer 1-65535, got 65536',
    },
    { name: 'fractional port', doc: { startup: { app: { grpc: { port: 80.5 } } } }, message: 'got 80.5' },
    {
      name: 'bad scheme',
      doc: { liveness: { app: { httpGet: { port: 1, scheme: 'http' } } } },
      message: 'liveness.app.httpGet.scheme: must be "HTTP" or "HTTPS", got "http"',
    },
    {
      name: 'host set',
      doc: { liveness: { app: { httpGet: { port: 1, host: 'x' } } } },
      message: 'liveness.app.httpGet.host: is not supported',
    },
    {
      name: 'timeout 0',
      doc: { liveness: { app: { tcpSocket: { port: 1 }, timeoutSeconds: 0 } } },
      message: 'liveness.app.timeoutSeconds: must be an integer >= 1, got 0',
    },
    {
      name: 'timeout string',
      doc: { liveness: { app: { tcpSocket: { port: 1 }, timeoutSeconds: '1' } } },
      message: 'got "1"',
    },
    {
      name: 'unknown entry field',
      doc: { liveness: { app: { tcpSocket: { port: 1 }, period: 1 } } },
      message: 'liveness.app.period: unknown field',
    },
    {
      name: 'headers not an array',
      doc: { liveness: { app: { httpGet: { port: 1, httpHeaders: {} } } } },
      message: 'liveness.app.httpGet.httpHeaders: must be an array',
    },
    {
      name: 'bad header name',
      doc: { liveness: { app: { httpGet: { port: 1, httpHeaders: [{ name: 'X Y', value: '' }] } } } },
      message: 'liveness.app.httpGet.httpHeaders[0].name: must be an HTTP header name, got "X Y"',
    },
    {
      name: 'header value with CRLF',
      doc: { liveness: { app: { httpGet: { port: 1, httpHeaders: [{ name: 'X', value: 'a\r\nB: c' }] } } } },
      message: 'liveness.app.httpGet.httpHeaders[0].value: must be a string without CR, LF or NUL',
    },
    {
      name: 'path with space',
      doc: { liveness: { app: { httpGet: { port: 1, path: '/a b' } } } },
      message: 'liveness.app.httpGet.path: must not contain whitespace',
    },
    {
      name: 'service not a string',
      doc: { liveness: { app: { grpc: { port: 1, service: 3 } } } },
      message: 'liveness.app.grpc.service: must be a string, got 3',
    },
  ])('refuses $name', ({ doc, message }) => {
    expect(() => parseProbeTable(doc)).toThrow(TableError);
    expect(() => parseProbeTable(doc)).toThrow(message);
  });

  it('reports invalid JSON with its source', () => {
    expect(() => parseProbeTableJson('{"liveness":', 'env OSM_HEALTHCHECK_PROBES')).toThrow(
      /env OSM_HEALTHCHECK_PROBES is not valid JSON/,
    );
  });
});
