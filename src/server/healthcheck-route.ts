// osm-edge's header-driven probe: `GET /osm-healthcheck` with `Original-Tcp-Port` or `Original-Http-Port`
// [+ `Original-Http-Path`] (../original-headers.ts), on every listener, against the ports the table allows; a
// wrap of one of our own probe paths is served as that probe.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Recorder } from '../metrics/recorder.js';
import { originalHeaders, parseOriginalHeaders } from '../original-headers.js';
import { HEALTHCHECK_PATH, HTTP_PATH_HEADER } from '../scheme.js';
import type { ProbeHandler, ProbeTable } from '../table/types.js';
import type { Forward } from './forwarder.js';
import type { CompanionFastify } from './instance.js';
import { answer, closeIfBody } from './plain-answer.js';
import type { ServeEntry } from './probe-routes.js';
import { matchPath, portTimeouts } from './routing.js';

export interface HealthcheckOptions {
  /** Header-driven timeouts: the longest the table gives a port. */
  table: ProbeTable | undefined;
  /** Ports header-driven probes may reach; undefined: any. */
  allowedPorts: ReadonlySet<number> | undefined;
  recorder: Recorder;
  forward: Forward;
  /** How a wrapped probe path is served. */
  serveEntry: ServeEntry;
  /** Told each allowed port a header names: without a table, the ports serve waits on at SIGTERM. */
  onAsked: ((port: number) => void) | undefined;
}

export function registerHealthcheckRoute(app: CompanionFastify, options: HealthcheckOptions): void {
  const { allowedPorts, recorder, forward, serveEntry, onAsked } = options;
  const timeoutFor = portTimeouts(options.table);

  function healthcheck(request: FastifyRequest, reply: FastifyReply) {
    closeIfBody(request, reply);
    const parsed = parseOriginalHeaders(originalHeaders(request.raw.rawHeaders));
    if (!parsed.ok) {
      recorder.headerCheck('invalid');
      return answer(reply, 400, `healthcheck: ${parsed.reason}`);
    }
    const { target } = parsed;
    if (target.type === 'self') return wrapped(request, reply, target.path);
    if (allowedPorts !== undefined && !allowedPorts.has(target.port)) {
      recorder.headerCheck('port_not_allowed');
      const list = [...allowedPorts].sort((a, b) => a - b).join(', ') || 'none';
      return answer(reply, 403, `healthcheck: port ${target.port} is not allowed; allowed ports: ${list}`);
    }
    const handler: ProbeHandler =
      target.type === 'tcp'
        ? { type: 'tcpSocket', port: target.port }
        : { type: 'httpGet', scheme: 'HTTP', port: target.port, path: target.path, httpHeaders: [] };
    recorder.headerCheck(target.type);
    onAsked?.(target.port);
    const fields = () => ({ kind: 'healthcheck', target: `${handler.type}:${target.port}` });
    return forward(request, reply, 'healthcheck', handler.type, handler, timeoutFor(target.port), fields);
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
