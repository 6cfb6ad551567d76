// The Health/Check wire format on its own: requests and responses checked against grpc-health-check's own
// protobuf codec (the one its grpc-js server uses), and the status rules for answers a real server rarely sends.

import { service } from 'grpc-health-check';
import { describe, expect, it } from 'vitest';
import {
  callStatus,
  decodeCheckResponse,
  encodeCheckRequest,
  grpcTimeout,
  resetStatus,
} from '../../src/probe/grpc-wire.js';

const check = service.Check;
if (check === undefined) throw new Error('grpc-health-check has no Check method');

/** A gRPC message frame around protobuf bytes: uncompressed, big-endian length. */
function frame(bytes: number[] | Buffer, flag = 0): Buffer {
  const body = Buffer.from(bytes);
  const prefix = Buffer.alloc(5);
  prefix[0] = flag;
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
}

describe('encodeCheckRequest', () => {
  it.each([
    { name: 'the default service ""', service: '' },
    { name: 'a dotted name', service: 'my.pkg.Orders' },
    { name: 'a name of 200 bytes (two-byte length)', service: 'x'.repeat(200) },
    { name: 'non-ASCII', service: 'dienst-ü' },
  ])('$name reads back as grpc-health-check decodes it', ({ service: name }) => {
    const bytes = encodeCheckRequest(name);
    expect(bytes[0]).toBe(0);
    expect(bytes.readUInt32BE(1)).toBe(bytes.length - 5);
    // grpc-health-check's server turns the request bytes into this object.
    const server = service.Check as unknown as { requestDeserialize: (b: Buffer) => { service: string } };
    expect(server.requestDeserialize(bytes.subarray(5))).toEqual({ service: name });
  });
});

describe('decodeCheckResponse', () => {
  it.each(['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'])(
    '%s as grpc-health-check encodes it',
    (status) => {
      const bytes = check.responseSerialize({ status } as never);
      expect(decodeCheckResponse(frame(bytes))).toEqual({ status });
    },
  );

  it.each([
    { name: 'no status field: the default, UNKNOWN', bytes: [], status: 'UNKNOWN' },
    { name: 'a number this proto does not name', bytes: [0x08, 0x07], status: '7' },
    {
      name: 'a negative enum (ten-byte varint)',
      bytes: [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
      status: '-1',
    },
    { name: 'the last status field wins', bytes: [0x08, 0x02, 0x08, 0x01], status: 'SERVING' },
    {
      name: 'unknown fields of every wire type are skipped',
      bytes: [
        0x10, 0x96, 0x01, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x22, 0x02, 0x61, 0x62, 0x2d, 1, 2, 3, 4, 0x08, 0x01,
      ],
      status: 'SERVING',
    },
  ])('$name', ({ bytes, status }) => {
    expect(decodeCheckResponse(frame(bytes))).toEqual({ status });
  });

  it.each([
    { name: 'no message', body: Buffer.alloc(0), code: 'UNIMPLEMENTED', details: /^No message received$/ },
    {
      name: 'two messages',
      body: Buffer.concat([frame([0x08, 0x01]), frame([0x08, 0x01])]),
      code: 'UNIMPLEMENTED',
      details: /^Too many responses received$/,
    },
    { name: 'a compressed message', body: frame([0x08, 0x01], 1), code: 'INTERNAL', details: /compressed/ },
    { name: 'a truncated prefix', body: Buffer.from([0, 0, 0]), code: 'INTERNAL', details: /parsing error/ },
    {
      name: 'a frame longer than the body',
      body: frame([0x08, 0x01]).subarray(0, 6),
      code: 'INTERNAL',
      details: /parsing error/,
    },
    {
      name: 'a status varint cut short',
      body: frame([0x08, 0x80]),
      code: 'INTERNAL',
      details: /parsing error/,
    },
    { name: 'a group (wire type 3)', body: frame([0x0b]), code: 'INTERNAL', details: /parsing error/ },
    {
      name: 'a length past the end',
      body: frame([0x12, 0x05, 0x01]),
      code: 'INTERNAL',
      details: /parsing error/,
    },
  ])('$name: $code', ({ body, code, details }) => {
    const decoded = decodeCheckResponse(body);
    expect(decoded).toEqual({ error: { code, details: expect.stringMatching(details) } });
  });
});

describe('callStatus', () => {
  it.each([
    {
      name: 'grpc-status with a percent-encoded message',
      trailers: { 'grpc-status': '14', 'grpc-message': 'draining%3A 100%25 %C3%BC' },
      http: 200,
      status: { code: 'UNAVAILABLE', details: 'draining: 100% ü' },
    },
    {
      name: 'a malformed percent-encoding, shown as sent',
      trailers: { 'grpc-status': '13', 'grpc-message': 'bad %E0%A4%A' },
      http: 200,
      status: { code: 'INTERNAL', details: 'bad %E0%A4%A' },
    },
    { name: 'OK', trailers: { 'grpc-status': '0' }, http: 200, status: { code: 'OK', details: '' } },
    {
      name: 'a code past the known ones',
      trailers: { 'grpc-status': '42' },
      http: 200,
      status: { code: '42', details: '' },
    },
    ...[
      [400, 'INTERNAL'],
      [401, 'UNAUTHENTICATED'],
      [403, 'PERMISSION_DENIED'],
      [404, 'UNIMPLEMENTED'],
      [429, 'UNAVAILABLE'],
      [502, 'UNAVAILABLE'],
      [503, 'UNAVAILABLE'],
      [504, 'UNAVAILABLE'],
      [200, 'UNKNOWN'],
      [500, 'UNKNOWN'],
    ].map(([http, code]) => ({
      name: `no grpc-status, HTTP ${http}`,
      trailers: {},
      http: http as number,
      status: { code: code as string, details: `Received HTTP status code ${http}` },
    })),
    {
      name: 'nothing at all',
      trailers: {},
      http: undefined,
      status: { code: 'UNKNOWN', details: 'No status information received' },
    },
  ])('$name', ({ trailers, http, status }) => {
    expect(callStatus(trailers, http)).toEqual(status);
  });
});

describe('resetStatus', () => {
  it.each([
    { rst: 0, http: 200, code: 'INTERNAL', details: /Call ended without gRPC status/ },
    { rst: 0, http: 503, code: 'UNAVAILABLE', details: /^Received HTTP status code 503$/ },
    { rst: 7, http: undefined, code: 'UNAVAILABLE', details: /^Stream refused by server$/ },
    { rst: 8, http: undefined, code: 'CANCELLED', details: /^Call cancelled$/ },
    { rst: 11, http: undefined, code: 'RESOURCE_EXHAUSTED', details: /Bandwidth/ },
    { rst: 12, http: undefined, code: 'PERMISSION_DENIED', details: /not secure/ },
    { rst: 2, http: undefined, code: 'INTERNAL', details: /^Received RST_STREAM with code 2$/ },
  ])('RST_STREAM $rst after HTTP $http: $code', ({ rst, http, code, details }) => {
    expect(resetStatus(rst, http)).toEqual({ code, details: expect.stringMatching(details) });
  });
});

describe('grpcTimeout', () => {
  it.each([
    { ms: 900, header: '900m' },
    { ms: 0.2, header: '1m' },
    { ms: -5, header: '1m' },
    { ms: 1e12, header: '99999999m' },
  ])('$ms ms -> $header', ({ ms, header }) => {
    expect(grpcTimeout(ms)).toBe(header);
  });
});
