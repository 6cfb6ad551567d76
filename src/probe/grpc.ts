// gRPC probe, as kubelet's pkg/probe/grpc runs it: a plaintext grpc.health.v1.Health/Check against the app, with
// kubelet's User-Agent (grpc-user-agent.ts: grpc-go's token appended) and one deadline for connect and call. One unary call on node's own HTTP/2 client: the wire
// format is grpc-wire.ts, the verdict rules grpc-verdict.ts.
//
// Why not grpc-js: for this one call it cost every companion with a gRPC probe ~10 MiB more memory than node:http2
// and a few hundred KB of code to load (BENCHMARKS.md "Memory per companion against a raw node:http server"). The
// tests' peers stay grpc-js servers running grpc-health-check, so what this client sends is checked by a real gRPC
// server.

import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';
import { DEFAULT_USER_AGENT } from '../scheme.js';
import type { GrpcHandler } from '../table/types.js';
import { type FailureReason, reasonOfError } from './failure-reason.js';
import { grpcUserAgent } from './grpc-user-agent.js';
import { type GrpcOutcome, grpcVerdict } from './grpc-verdict.js';
import {
  CHECK_PATH,
  callStatus,
  decodeCheckResponse,
  encodeCheckRequest,
  type GrpcStatus,
  grpcTimeout,
  MAX_RECEIVE_BYTES,
  resetStatus,
} from './grpc-wire.js';
import { joinHostPort, type ProbeResult, type ProbeTarget } from './result.js';

type Http2 = typeof import('node:http2');
let http2: Promise<Http2> | undefined;

/** node:http2 (and the TLS it loads) only once a table has a gRPC probe: a few ms and ~1 MiB otherwise saved. */
function loadHttp2(): Promise<Http2> {
  http2 ??= import('node:http2');
  return http2;
}

/** Loads what a gRPC probe needs ahead of the first one, so no probe's budget pays for it. */
export async function preloadGrpc(): Promise<void> {
  await loadHttp2();
}

export async function probeGrpc(
  spec: Pick<GrpcHandler, 'port' | 'service'>,
  target: ProbeTarget,
  userAgent: string = DEFAULT_USER_AGENT,
): Promise<ProbeResult> {
  const start = performance.now();
  // One deadline for connecting and the call, as grpc.go's single context.WithTimeout.
  const deadline = start + target.timeoutMs;
  const addr = joinHostPort(target.host, spec.port);
  const agent = grpcUserAgent(userAgent);
  const { connect } = await loadHttp2();
  const outcome = await new Promise<GrpcOutcome>((resolve) => {
    // kubelet dials a new connection per probe and closes it after: nothing is shared with another probe.
    const session = connect(`http://${addr}`);
    // grpc.go dials WithBlock: the call starts once the connection is up, HTTP/2 settings exchanged (grpc-go's
    // transport is READY on the server's preface). Before that, any end is "failed to connect".
    let connected = false;
    let settled = false;
    const end = (outcome: GrpcOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      resolve(outcome);
    };
    const fail = ({ code, details }: GrpcStatus, transport?: FailureReason) =>
      end({ kind: 'error', code, details, connected, transport });
    const timer = setTimeout(
      () => fail({ code: 'DEADLINE_EXCEEDED', details: 'Deadline exceeded' }),
      deadline - performance.now(),
    );
    session.on('error', (err) => fail({ code: 'UNAVAILABLE', details: err.message }, reasonOfError(err)));
    session.on('close', () =>
      fail({ code: 'UNAVAILABLE', details: connected ? 'Connection dropped' : 'Connection closed' }, 'reset'),
    );
    session.once('remoteSettings', () => {
      connected = true;
      check(session, { service: spec.service, userAgent: agent, deadline }).then(end, (err: Error) =>
        fail({ code: 'INTERNAL', details: err.message }),
      );
    });
  });
  const elapsedMs = Math.round(performance.now() - start);
  return grpcVerdict(outcome, { addr, service: spec.service, elapsedMs, timeoutMs: target.timeoutMs });
}

interface CheckCall {
  service: string;
  userAgent: string;
  deadline: number;
}

/** One Health/Check on a connected session: resolves once the stream has closed, with what it came back with. */
function check(session: ClientHttp2Session, call: CheckCall): Promise<GrpcOutcome> {
  return new Promise((resolve) => {
    const stream = session.request(
      {
        ':method': 'POST',
        ':path': CHECK_PATH,
        'content-type': 'application/grpc',
        te: 'trailers',
        'user-agent': call.userAgent,
        // The server learns the deadline too, so a slow handler is cancelled there as well.
        'grpc-timeout': grpcTimeout(call.deadline - performance.now()),
      },
      { endStream: false },
    );
    let httpStatus: number | undefined;
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    const error = (status: GrpcStatus): GrpcOutcome => ({ kind: 'error', ...status, connected: true });
    stream.on('response', (headers, flags) => {
      httpStatus = Number(headers[':status']);
      // A trailers-only answer (END_STREAM on the headers) carries grpc-status in them.
      if ((flags & 1) !== 0) trailers = headers;
    });
    stream.on('trailers', (headers) => {
      trailers = headers;
    });
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_RECEIVE_BYTES) {
        const details = `Received message larger than max (${received} vs. ${MAX_RECEIVE_BYTES})`;
        resolve(error({ code: 'RESOURCE_EXHAUSTED', details }));
        stream.close();
        return;
      }
      chunks.push(chunk);
    });
    // The reason a stream ended badly is its RST_STREAM code, read on close.
    stream.on('error', () => {});
    stream.on('close', () => {
      if (trailers === undefined) return resolve(error(resetStatus(stream.rstCode ?? 0, httpStatus)));
      const status = callStatus(trailers, httpStatus);
      if (status.code !== 'OK') return resolve(error(status));
      const response = decodeCheckResponse(Buffer.concat(chunks));
      resolve('status' in response ? { kind: 'response', ...response } : error(response.error));
    });
    stream.end(encodeCheckRequest(call.service));
  });
}
