// osm-edge's header-driven probe: `GET /osm-healthcheck` with `Original-Tcp-Port` or `Original-Http-Port`
// [+ `Original-Http-Path`] (../original-headers.ts), on every listener: with a table it runs only the table probe
// the headers name (header-probes.ts), else 403; a wrap of one of our own probe paths is served as that probe.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Recorder } from '../metrics/recorder.js';
import { originalHeaders, parseOriginalHeaders } from '../original-headers.js';
import { HEALTHCHECK_PATH, HTTP_PATH_HEADER } from '../scheme.js';
import type { Forward } from './forwarder.js';
import type { HeaderRule } from './header-probes.js';
import type { CompanionFastify } from './instance.js';
import { answer } from './plain-answer.js';
import type { ServeEntry } from './probe-routes.js';
import { matchPath } from './routing.js';

export interface HealthcheckOptions {
  /** The probe a header-driven request runs, or why none. */
  rule: HeaderRule;
  recorder: Recorder;
  forward: Forward;
  /** How a wrapped probe path is served. */
  serveEntry: ServeEntry;
  /** Told each allowed port a header names: without a table, the ports serve waits on at SIGTERM. */
  onAsked: ((port: number) => void) | undefined;
}

export function registerHealthcheckRoute(app: CompanionFastify, options: HealthcheckOptions): void {
  const { rule, recorder, forward, serveEntry, onAsked } = options;

  function healthcheck(request: FastifyRequest, reply: FastifyReply) {
    const parsed = parseOriginalHeaders(originalHeaders(request.raw.rawHeaders));
    if (!parsed.ok) {
      recorder.headerCheck('invalid');
      return answer(reply, 400, `healthcheck: ${parsed.reason}`);
    }
    const { target } = parsed;
    if (target.type === 'self') return wrapped(request, reply, target.path);
    const run = rule.resolve(target);
    if (!run.ok) {
      // Counted as before under one outcome: with a table, a port and path the table lacks is as refused.
      recorder.headerCheck('port_not_allowed');
      return answer(reply, 403, `healthcheck: ${run.reason}`);
    }
    const { handler, timeoutSeconds } = run;
    recorder.headerCheck(target.type);
    onAsked?.(handler.port);
    const fields = () => ({ kind: 'healthcheck', target: `${handler.type}:${handler.port}` });
    return forward(request, reply, 'healthcheck', handler.type, handler, timeoutSeconds, fields);
  }

  /** osm-edge's wrap of one of our own probe paths (original-headers.ts): serve that path's entry. */
  function wrapped(request: FastifyRequest, reply: FastifyReply, path: string) {
    const match = matchPath(path.split('?')[0] ?? path);
    if (match?.route !== 'probe') {
      recorder.headerCheck('invalid');
      return answer(
        reply,
        400,
        `healthcheck: ${HTTP_PATH_HEADER} ${JSON.stringify(path)} names this companion but none of its probe paths`,
      );
    }
    recorder.headerCheck('unwrapped');
    return serveEntry(request, reply, match.kind, match.container);
  }

  app.get(HEALTHCHECK_PATH, (request, reply) => healthcheck(request, reply));
}
