// The HTTP/HTTPS prober's I/O: dial (TLS offers h2 and http/1.1 over ALPN), one GET per hop over HTTP/1.1 or
// HTTP/2, at most 10 KiB of body, all under one deadline. What to send and whether to follow is decided in
// http-request.ts, what an answer means in http-outcome.ts: this file moves bytes and turns events to values.
//
//   companion --GET--> app:port/path [--same-host redirects--> ...] --> verdict, status, one-line message

import { type IncomingMessage, request } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { DEFAULT_USER_AGENT } from '../scheme.js';
import { type FailureReason, reasonOfError } from './failure-reason.js';
import { answered, atHop, describeError, failed, timeoutReason, verdictFor } from './http-outcome.js';
import {
  firstHop,
  type Hop,
  type HttpSpec,
  h1Headers,
  h2Headers,
  MAX_BODY_BYTES,
  nextStep,
  redirectBodyBytes,
} from './http-request.js';
import type { ProbeResult, ProbeTarget } from './result.js';

/**
 * Response headers may be large (Go's transport allows 10 MiB); node's 16 KiB default would fail apps kubelet
 * passes. 1 MiB covers real apps while keeping one probe's memory bounded.
 */
const MAX_RESPONSE_HEADER_BYTES = 1 << 20;

let tls: Promise<typeof import('node:tls')> | undefined;

/**
 * node:tls (with node:crypto behind it) is loaded on the first HTTPS probe only: it costs a plain-HTTP companion
 * about 5 ms of every start (BENCHMARKS.md). A table with HTTPS entries loads it at start-up instead.
 */
export function loadTls(): Promise<typeof import('node:tls')> {
  tls ??= import('node:tls');
  return tls;
}

type Stage = 'connection' | 'TLS handshake' | 'response headers' | 'body' | 'redirect body';

/** kubelet's http.Client{Timeout}: one clock for the whole run. On expiry it aborts whatever is in flight. */
class Deadline {
  stage: Stage = 'connection';
  expired = false;
  private abort: (() => void) | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(readonly budgetMs: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.abort?.();
    }, budgetMs);
  }

  /** From now on expiry calls `abort`; at once when the deadline has already passed. */
  enter(stage: Stage, abort: () => void): void {
    this.stage = stage;
    this.abort = abort;
    if (this.expired) abort();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

interface Failed {
  failure: string;
  reason: FailureReason;
}

/** A transport error as a failure: node's wording, and the reason its code says. */
function failedWith(err: unknown): Failed {
  return { failure: describeError(err), reason: reasonOfError(err) };
}

/** The peer closed the connection before the answer was complete. */
function closed(failure: string): Failed {
  return { failure, reason: 'reset' };
}

const TIMED_OUT: Failed = { failure: 'timeout', reason: 'timeout' };

/** What reading a body came to: the bytes kept (none unless asked to keep them), or why the read failed. */
type BodyRead = { bytes: Buffer } | Failed;

/** Response headers are in; the body waits in the stream until `finish` reads it. */
interface Answer {
  status: number;
  location: string | undefined;
  contentLength: string | undefined;
  contentType: string | undefined;
  /** Reads at most `limit` body bytes, keeping them if `keep`, then closes the connection. */
  finish(limit: number, stage: Stage, keep?: boolean): Promise<BodyRead>;
}

const NO_BYTES = Buffer.alloc(0);

/** Runs one kubelet httpGet probe. Never throws for app/transport problems: those are results. */
export async function probeHttp(
  spec: HttpSpec,
  target: ProbeTarget,
  userAgent: string = DEFAULT_USER_AGENT,
): Promise<ProbeResult> {
  const started = performance.now();
  const first = firstHop(spec, target.host, userAgent);
  const deadline = new Deadline(target.timeoutMs);
  const fail = ({ failure, reason }: Failed, hop: Hop, followed: number): ProbeResult =>
    deadline.expired
      ? failed(first, atHop(timeoutReason(deadline.budgetMs, deadline.stage), hop, followed), 'timeout')
      : failed(first, atHop(failure, hop, followed), reason, Math.round(performance.now() - started));
  try {
    let hop = first;
    for (let followed = 0; ; followed++) {
      const answer = await exchange(hop, deadline);
      if ('failure' in answer) return fail(answer, hop, followed);
      const step = nextStep(first, hop, answer.status, answer.location, followed);
      if (step.kind === 'follow') {
        // Go drains a little of a redirect's body under the same deadline; its read errors do not matter.
        await answer.finish(redirectBodyBytes(answer.contentLength), 'redirect body');
        if (deadline.expired) return fail(TIMED_OUT, hop, followed);
        hop = step.hop;
        continue;
      }
      if (step.kind === 'fail') {
        await answer.finish(0, 'body');
        return fail({ failure: step.reason, reason: 'redirect' }, first, 0);
      }
      // http.go reads the body of every final answer (utilio.ReadAtMost); a read error fails the probe. A 3xx's
      // body goes into kubelet's Warning, so the companion keeps it to hand on.
      const keep = verdictFor(answer.status).verdict === 'warning';
      const read = await answer.finish(MAX_BODY_BYTES, 'body', keep);
      if ('failure' in read) return fail(read, hop, followed);
      const ms = Math.round(performance.now() - started);
      const body = { bytes: read.bytes, contentType: answer.contentType };
      return answered(first, hop, followed, answer.status, ms, step.note, body);
    }
  } finally {
    deadline.stop();
  }
}

async function exchange(hop: Hop, deadline: Deadline): Promise<Answer | Failed> {
  const socket = await dial(hop.url, deadline);
  if ('failure' in socket) return socket;
  // HTTP/2 only where the server picked it over ALPN: plain http never uses h2 (Go's transport neither).
  if ((socket as TLSSocket).alpnProtocol === 'h2') return exchangeH2(hop, socket as TLSSocket, deadline);
  return exchangeH1(hop, socket, deadline);
}

async function dial(url: URL, deadline: Deadline): Promise<Socket | Failed> {
  const secure = url.protocol === 'https:';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const options = { host, port: Number(url.port) || (secure ? 443 : 80), noDelay: true };
  const tlsConnect = secure ? (await loadTls()).connect : undefined;
  return new Promise((resolve) => {
    // kubelet: InsecureSkipVerify, no client certificate; Go offers h2, http/1.1. No SNI: the host is an IP.
    const socket =
      tlsConnect === undefined
        ? netConnect(options)
        : tlsConnect({ ...options, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] });
    const fail = (failure: Failed) => {
      socket.destroy();
      resolve(failure);
    };
    // Stays for the socket's life, so no later 'error' is ever unhandled. An error in the handshake is TLS's.
    let handshaking = false;
    socket.on('error', (err) => {
      const failure = failedWith(err);
      fail(handshaking && failure.reason === 'other' ? { ...failure, reason: 'tls' } : failure);
    });
    deadline.enter('connection', () => fail(TIMED_OUT));
    if (tlsConnect === undefined) {
      socket.once('connect', () => resolve(socket));
      return;
    }
    socket.once('connect', () => {
      handshaking = true;
      deadline.enter('TLS handshake', () => fail(TIMED_OUT));
    });
    socket.once('secureConnect', () => resolve(socket));
  });
}

function exchangeH1(hop: Hop, socket: Socket, deadline: Deadline): Promise<Answer | Failed> {
  return new Promise((resolve) => {
    let settled = false;
    const close = () => socket.destroy();
    const fail = (failure: Failed) => {
      if (settled) return;
      settled = true;
      close();
      resolve(failure);
    };
    const answer = (res: IncomingMessage, finish: Answer['finish']) => {
      if (settled) return;
      settled = true;
      const { location, 'content-length': contentLength, 'content-type': contentType } = res.headers;
      resolve({ status: res.statusCode ?? 0, location, contentLength, contentType, finish });
    };
    deadline.enter('response headers', () => fail(TIMED_OUT));
    try {
      const req = request({
        createConnection: () => socket,
        path: `${hop.url.pathname}${hop.url.search}`,
        headers: h1Headers(hop),
        maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
      });
      req.on('error', (err) => fail(failedWith(err)));
      req.on('close', () => fail(closed('connection closed before a response')));
      // 1xx interim answers (100, 103) are skipped by node; the final one counts.
      req.on('response', (res) =>
        answer(res, (limit, stage, keep) => readAtMost(res, limit, stage, deadline, close, keep)),
      );
      // A 101 nobody asked for: Go hands it back as the answer (kubelet: Failure); node calls it an upgrade.
      req.on('upgrade', (res) =>
        answer(res, async () => {
          close();
          return { bytes: NO_BYTES };
        }),
      );
      req.end();
    } catch (err) {
      // node refuses a header it cannot send, as Go's transport does.
      fail(failedWith(err));
    }
  });
}

async function exchangeH2(hop: Hop, socket: TLSSocket, deadline: Deadline): Promise<Answer | Failed> {
  const { connect } = await import('node:http2');
  return new Promise((resolve) => {
    let settled = false;
    const session = connect(hop.url.origin, { createConnection: () => socket });
    const close = () => session.destroy();
    const fail = (failure: Failed) => {
      if (settled) return;
      settled = true;
      close();
      resolve(failure);
    };
    session.on('error', (err) => fail(failedWith(err)));
    session.on('close', () => fail(closed('connection closed before a response')));
    deadline.enter('response headers', () => fail(TIMED_OUT));
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(h2Headers(hop), { endStream: true });
    } catch (err) {
      fail(failedWith(err));
      return;
    }
    stream.on('error', (err) => fail(failedWith(err)));
    stream.on('close', () =>
      fail(closed(`stream closed before a response (HTTP/2 error code ${stream.rstCode})`)),
    );
    // 'response' carries the final status; 1xx interim headers arrive as 'headers' and are skipped.
    stream.on('response', (headers) => {
      if (settled) return;
      settled = true;
      const header = (name: string) =>
        typeof headers[name] === 'string' ? (headers[name] as string) : undefined;
      resolve({
        status: Number(headers[':status']),
        location: header('location'),
        contentLength: header('content-length'),
        contentType: header('content-type'),
        finish: (limit, stage, keep) => readAtMost(stream, limit, stage, deadline, close, keep),
      });
    });
  });
}

/**
 * utilio.ReadAtMost: read to the end or to `limit` bytes, whichever comes first, then close. With `keep`, the
 * bytes read, exactly `limit` of them at most, as kubelet would have them.
 */
function readAtMost(
  body: Readable,
  limit: number,
  stage: Stage,
  deadline: Deadline,
  close: () => void,
  keep = false,
): Promise<BodyRead> {
  return new Promise((resolve) => {
    let settled = false;
    let read = 0;
    const chunks: Buffer[] = [];
    const done = (failure?: Failed) => {
      if (settled) return;
      settled = true;
      close();
      resolve(failure ?? { bytes: keep ? Buffer.concat(chunks).subarray(0, limit) : NO_BYTES });
    };
    if (limit <= 0) return done();
    deadline.enter(stage, () => done(TIMED_OUT));
    body.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (keep) chunks.push(chunk);
      if (read >= limit) done();
    });
    body.on('end', () => done());
    body.on('error', (err) => {
      const failure = failedWith(err);
      done({ ...failure, failure: `body read failed: ${failure.failure}` });
    });
    body.on('close', () => done(closed('connection closed while reading the body')));
  });
}
