// The Fastify instance serve's routes hang on, before any route: the hard limits, paths matched exactly as sent,
// the listener each connection came in on as a route constraint, no body ever read, and a plain-text line for a
// request Fastify itself refuses or a route that throws.

import type { Socket } from 'node:net';
import Fastify, { LogController } from 'fastify';
import type { Logger } from '../log.js';
import { LEAN_SCHEMA_CONTROLLER } from '../schema-free.js';
import type { ListenerRole } from '../scheme.js';
import { listenerConstraint } from './listener-constraint.js';
import { answer, closeIfBody } from './plain-answer.js';

// Hard limits (docs/architecture.md#hard-limits): no request may hold a connection long, and nothing large is
// read (no route reads a body, and a request that sends one gets its connection closed after the answer).
export const LIMITS = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
} as const;

export function companionFastify(log: Logger, roleOf: (socket: Socket) => ListenerRole | undefined) {
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
      connectionsCheckingInterval: 500,
    },
    // A malformed URL or an over-long container name: a plain-text line like every other answer.
    frameworkErrors: (err, request, reply) => {
      closeIfBody(request, reply);
      const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 404 : 400;
      answer(reply, status, `bad request path: ${err.message}`);
    },
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
