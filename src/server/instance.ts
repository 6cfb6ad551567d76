// The Fastify instance serve's routes hang on, before any route: the hard limits, paths matched exactly as sent,
// the listener each connection came in on as a route constraint, no body ever read, and a plain-text line for a
// request Fastify itself refuses, a client node cuts (counted: docs/security.md#under-load) or a route that throws.

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController } from 'fastify';
import type { Logger } from '../log.js';
import type { CutReason } from '../metrics/recorder.js';
import { LEAN_SCHEMA_CONTROLLER } from '../schema-free.js';
import type { ListenerRole } from '../scheme.js';
import { listenerConstraint } from './listener-constraint.js';
import { answer } from './plain-answer.js';

// Hard limits (docs/security.md#under-load): no request may hold a connection long, and nothing large is read (no
// route reads a body). kubelet writes its whole request at once on a new connection and never reuses it
// (pkg/probe/http: DisableKeepAlives), so a header deadline of 2 s is twice its shortest timeout and every answer
// closes its connection (plain-answer.ts): a caller can't hold one idle between requests.
export const LIMITS = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
} as const;

/** What node's HTTP parser said of a client it gave up on, as a cut's reason; undefined: the client went away. */
export function cutReasonOf(code: string | undefined): Exclude<CutReason, 'rate'> | undefined {
  if (code === 'ECONNRESET' || code === 'EPIPE') return undefined;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'timeout';
  if (code === 'HPE_HEADER_OVERFLOW') return 'too_large';
  return 'malformed';
}

/** The status node's parser's cuts are answered with (a cut for rate is closed before a byte is read). */
const CUT_STATUS: Record<Exclude<CutReason, 'rate'>, number> = {
  timeout: 408,
  too_large: 431,
  malformed: 400,
};

export function companionFastify(
  log: Logger,
  roleOf: (socket: Socket) => ListenerRole | undefined,
  onCut: (socket: Socket, reason: CutReason) => void = () => {},
) {
  const app = Fastify({
    loggerInstance: log,
    // One line per failed probe is the log's job (forwarder.ts); per-request lines and per-request child loggers
    // would cost more than the probe itself on the hot path.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger) => logger,
    return503OnClosing: true,
    // Schema-free routes: Fastify need not load (nor the bundle carry) Ajv or fast-json-stringify.
    schemaController: LEAN_SCHEMA_CONTROLLER,
    routerOptions: {
      // Paths are matched exactly as sent (docs/architecture.md#serve-routes-and-verdicts): no trailing-slash or
      // duplicate-slash folding.
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      // Container names are DNS-1123 labels: at most 63 characters.
      maxParamLength: 63,
      constraints: { listener: listenerConstraint((req) => roleOf(req.socket)) },
    },
    keepAliveTimeout: LIMITS.keepAliveTimeoutMs,
    requestTimeout: LIMITS.requestTimeoutMs,
    bodyLimit: 1,
    http: {
      maxHeaderSize: LIMITS.maxHeaderBytes,
      headersTimeout: LIMITS.headersTimeoutMs,
      // Check for slow clients often: the default 30 s would let a slowloris hold sockets for that long.
      connectionsCheckingInterval: 250,
    },
    // Fastify's own answer, as one plain-text line, and the cut counted by why (a slow, malformed or huge request).
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      const reason = cutReasonOf(err.code);
      if (reason === undefined || socket.destroyed) return;
      onCut(socket, reason);
      const status = CUT_STATUS[reason];
      const body = `${STATUS_CODES[status]}: ${err.code ?? 'bad request'}\n`;
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${body.length}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
    // A malformed URL or an over-long container name: a plain-text line like every other answer.
    frameworkErrors: (err, _request, reply) => {
      const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 404 : 400;
      answer(reply, status, `bad request path: ${err.message}`);
    },
  });

  // One answer per connection, as kubelet uses them: node sends `Connection: close` and closes after the answer, so a
  // caller can neither hold a connection idle between requests nor pipeline a flood down it, and no body is drained.
  // Ahead of Fastify's own listener, so even an answer it gives at once (a bad URL) closes.
  app.server.prependListener('request', (_request, response) => {
    response.shouldKeepAlive = false;
  });

  // A body is never read: without a parser for it, Fastify would answer 415 before the not-found handler runs.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  app.setErrorHandler((err, _request, reply) => {
    log.error({ err }, 'request failed');
    return answer(reply, 500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
  });
  return app;
}

/** What the route modules register on. */
export type CompanionFastify = ReturnType<typeof companionFastify>;
