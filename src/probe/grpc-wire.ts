// What one grpc.health.v1.Health/Check puts on the wire and how its answer reads, without touching the network:
// the gRPC-over-HTTP/2 framing (github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md), the two tiny protobuf
// messages of grpc/health/v1/health.proto, and how a call's end becomes a gRPC status, as grpc-js
// (src/subchannel-call.ts) and grpc-go (internal/transport/http2_client.go) read it.

/** `grpc.health.v1.Health/Check`: the one method a probe calls. */
export const CHECK_PATH = '/grpc.health.v1.Health/Check';

/** grpc-go's default client receive limit (defaultClientMaxReceiveMessageSize), which kubelet's dial keeps. */
export const MAX_RECEIVE_BYTES = 4 * 1024 * 1024;

/** A gRPC status as the caller saw it: its name (codes.Code's String()) and the details. */
export interface GrpcStatus {
  code: string;
  details: string;
}

// google.golang.org/grpc/codes, in numeric order.
const CODES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

// grpc.health.v1.HealthCheckResponse.ServingStatus; any other number is shown as the number.
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

export function codeName(code: number): string {
  return CODES[code] ?? String(code);
}

/**
 * The Check request as one gRPC message: a 5-byte prefix (uncompressed, big-endian length) and
 * HealthCheckRequest { string service = 1 }, which proto3 leaves empty for the default "".
 */
export function encodeCheckRequest(service: string): Buffer {
  const name = Buffer.from(service, 'utf8');
  const body = name.length === 0 ? [] : [Buffer.from([0x0a, ...varint(name.length)]), name];
  const length = body.reduce((sum, part) => sum + part.length, 0);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(length, 1);
  return Buffer.concat([prefix, ...body]);
}

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
}

/** `grpc-timeout` for what is left of the budget: at most 8 digits, in milliseconds (PROTOCOL-HTTP2.md). */
export function grpcTimeout(remainingMs: number): string {
  return `${Math.min(99_999_999, Math.max(1, Math.ceil(remainingMs)))}m`;
}

/** The ServingStatus name in a unary call's response body (gRPC messages), or why it does not read as one. */
export function decodeCheckResponse(body: Buffer): { status: string } | { error: GrpcStatus } {
  const messages: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    if (body.length - at < 5) return parseError('truncated message prefix');
    if (body[at] !== 0) return { error: { code: 'INTERNAL', details: 'Received compressed message' } };
    const length = body.readUInt32BE(at + 1);
    if (at + 5 + length > body.length) return parseError('truncated message');
    messages.push(body.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  // grpc-js ends a unary call with exactly these two when the count of messages is not one.
  if (messages.length === 0) return { error: { code: 'UNIMPLEMENTED', details: 'No message received' } };
  if (messages.length > 1)
    return { error: { code: 'UNIMPLEMENTED', details: 'Too many responses received' } };
  const status = servingStatus(messages[0] as Buffer);
  return typeof status === 'number'
    ? { status: SERVING_STATUS[status] ?? String(status) }
    : parseError(status.error);
}

function parseError(why: string): { error: GrpcStatus } {
  return { error: { code: 'INTERNAL', details: `Response message parsing error: ${why}` } };
}

/** HealthCheckResponse { ServingStatus status = 1 }: the last field 1 wins, unknown fields are skipped. */
function servingStatus(message: Buffer): number | { error: string } {
  let status = 0;
  let at = 0;
  const read = (): number | undefined => {
    // A varint's low 32 bits, signed: what an int32 enum is (a negative one takes 10 bytes).
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      const byte = message[at++];
      if (byte === undefined) return undefined;
      if (shift < 32) value |= (byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
    return undefined;
  };
  while (at < message.length) {
    const key = read();
    if (key === undefined) return { error: 'bad field key' };
    const wire = key & 7;
    if (key >>> 3 === 1 && wire === 0) {
      const value = read();
      if (value === undefined) return { error: 'bad status varint' };
      status = value;
      continue;
    }
    if (wire === 0 && read() !== undefined) continue;
    const skip = wire === 1 ? 8 : wire === 5 ? 4 : wire === 2 ? read() : undefined;
    if (skip === undefined || skip < 0 || at + skip > message.length) {
      return { error: `bad field ${key >>> 3}` };
    }
    at += skip;
  }
  return status;
}

/**
 * The status a call ended with: `grpc-status` and `grpc-message` from the trailers (or a trailers-only answer),
 * else one read from the HTTP status, as grpc-js's mapHttpStatusCode does.
 */
export function callStatus(trailers: Record<string, unknown>, httpStatus: number | undefined): GrpcStatus {
  const status = trailers['grpc-status'];
  if (typeof status === 'string') {
    const message = trailers['grpc-message'];
    return {
      code: codeName(Number(status)),
      details: typeof message === 'string' ? percentDecoded(message) : '',
    };
  }
  if (httpStatus === undefined) return { code: 'UNKNOWN', details: 'No status information received' };
  return { code: httpStatusCode(httpStatus), details: `Received HTTP status code ${httpStatus}` };
}

/** grpc-message is percent-encoded UTF-8; a malformed one is shown as sent. */
function percentDecoded(message: string): string {
  try {
    return decodeURIComponent(message);
  } catch {
    return message;
  }
}

// doc/http-grpc-status-mapping.md.
function httpStatusCode(status: number): string {
  switch (status) {
    case 400:
      return 'INTERNAL';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'UNIMPLEMENTED';
    case 429:
    case 502:
    case 503:
    case 504:
      return 'UNAVAILABLE';
    default:
      return 'UNKNOWN';
  }
}

/** A stream the server reset before any gRPC status: the HTTP/2 error code read as gRPC's spec maps it. */
export function resetStatus(rstCode: number, httpStatus: number | undefined): GrpcStatus {
  switch (rstCode) {
    case 0: // NO_ERROR
      return httpStatus !== undefined && httpStatus !== 200
        ? callStatus({}, httpStatus)
        : { code: 'INTERNAL', details: 'Received RST_STREAM with code 0 (Call ended without gRPC status)' };
    case 7: // REFUSED_STREAM
      return { code: 'UNAVAILABLE', details: 'Stream refused by server' };
    case 8: // CANCEL
      return { code: 'CANCELLED', details: 'Call cancelled' };
    case 11: // ENHANCE_YOUR_CALM
      return { code: 'RESOURCE_EXHAUSTED', details: 'Bandwidth exhausted or memory limit exceeded' };
    case 12: // INADEQUATE_SECURITY
      return { code: 'PERMISSION_DENIED', details: 'Protocol not secure enough' };
    default:
      return { code: 'INTERNAL', details: `Received RST_STREAM with code ${rstCode}` };
  }
}
