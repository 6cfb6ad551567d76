// The companion's routes (DESIGN.md §5). Builds the Fastify app and never listens: listeners.ts binds ports.
//   kubelet -> HTTP -> this app -> prober (HTTP / TCP / gRPC) -> app container

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from '../log.js';
import type { ProbeResult } from '../probe/result.js';
import { probeBudgetMs } from '../probe/result.js';
import type { Prober } from '../probe/run.js';
import {
  HEALTHCHECK_PATH,
  HEALTHZ_PATH,
  type ListenerRole,
  PROBE_KINDS,
  type ProbeKind,
  probePath,
} from '../scheme.js';
import type { ProbeHandler, ProbeTable } from '../table/types.js';
import { Gate } from './gate.js';
import { parseOriginalHeaders } from './original-headers.js';
import { pathsFor, selectEntry, timeoutSecondsFor } from './routing.js';

export interface AppOptions {
  /** undefined: no table configured; only header-driven probes are served. */
  table: ProbeTable | undefined;
  /** Ports header-driven probes may reach; undefined: any. */
  allowedPorts: ReadonlySet<number> | undefined;
  /** POD_IP or 127.0.0.1: what kubelet itself would dial. */
  targetHost: string;
  prober: Prober;
  log: Logger;
  /** Which listener a connection came in on; undefined (e.g. app.inject in tests) serves every route. */
  roleOf: (socket: Socket) => ListenerRole | undefined;
  /** True once all four listeners are up and until shutdown starts. */
  isReady: () => boolean;
  /** Upstream probes in flight per listener; more are refused at once so a flood on one port can't starve another. */
  maxProbesPerListener: number;
}

// Hard limits (DESIGN.md §5): no request may hold a connection long, and nothing large is read.
export const LIMITS = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  bodyBytes: 1024,
} as const;

const KUBELET_UA = /^kube-probe\/\d+\.\d+$/;

export function buildApp(options: AppOptions): FastifyInstance {
  const { table, prober, log, roleOf } = options;
  const gates = new Map<ListenerRole | undefined, Gate>();
  const gateFor = (role: ListenerRole | undefined): Gate => {
    let gate = gates.get(role);
    if (gate === undefined) {
      gate = new Gate(options.maxProbesPerListener);
      gates.set(role, gate);
    }
    return gate;
  };

  const app = Fastify({
    logger: false,
    bodyLimit: LIMITS.bodyBytes,
    return503OnClosing: true,
    serverFactory: (handler) =>
      createServer(
        {
          maxHeaderSize: LIMITS.maxHeaderBytes,
          headersTimeout: LIMITS.headersTimeoutMs,
          requestTimeout: LIMITS.requestTimeoutMs,
          keepAliveTimeout: LIMITS.keepAliveTimeoutMs,
          // Check for slow clients often: the default 30 s would let a slowloris hold sockets for that long.
          connectionsCheckingInterval: 500,
        },
        handler as (req: IncomingMessage, res: ServerResponse) => void,
      ),
  });

  const answer = (reply: FastifyReply, status: number, line: string): FastifyReply =>
    reply.code(status).header('content-type', 'text/plain; charset=utf-8').send(`${line}\n`);

  const role = (request: FastifyRequest) => roleOf(request.raw.socket);

  async function run(
    request: FastifyRequest,
    reply: FastifyReply,
    label: string,
    handler: ProbeHandler,
    timeoutSeconds: number,
    fields: Record<string, unknown>,
  ): Promise<FastifyReply> {
    const gate = gateFor(role(request));
    if (!gate.enter()) {
      log.warn({ ...fields, reason: 'too many concurrent probes' }, 'probe refused');
      return answer(reply, 503, `${label}: refused: ${gate.limit} probes already in flight on this port`);
    }
    let result: ProbeResult;
    try {
      const ua = request.headers['user-agent'];
      const userAgent = ua !== undefined && KUBELET_UA.test(ua) ? ua : undefined;
      result = await prober(
        handler,
        { host: options.targetHost, timeoutMs: probeBudgetMs(timeoutSeconds) },
        userAgent,
      );
    } finally {
      gate.leave();
    }
    if (result.verdict === 'failure') log.warn({ ...fields, reason: result.message }, 'probe failed');
    else if (log.isLevelEnabled('debug')) log.debug({ ...fields, result: result.message }, 'probe passed');
    return answer(reply, result.status, `${label}: ${result.message}`);
  }

  function probeRoute(kind: ProbeKind) {
    return async (request: FastifyRequest<{ Params: { container?: string } }>, reply: FastifyReply) => {
      const here = role(request);
      if (here !== undefined && here !== kind) return notFound(request, reply);
      const container = request.params.container;
      const selection = selectEntry(table, kind, container);
      if (!selection.ok) return answer(reply, selection.status, `${kind}: ${selection.reason}`);
      const { entry } = selection;
      const fields = {
        kind,
        container: entry.container,
        target: `${entry.handler.type}:${entry.handler.port}`,
      };
      return run(request, reply, `${kind} ${entry.container}`, entry.handler, entry.timeoutSeconds, fields);
    };
  }

  for (const kind of PROBE_KINDS) {
    app.get(probePath(kind), probeRoute(kind));
    app.get(`${probePath(kind)}/:container`, probeRoute(kind));
  }

  app.get(HEALTHCHECK_PATH, async (request, reply) => {
    const parsed = parseOriginalHeaders(request.raw.headersDistinct);
    if (!parsed.ok) return answer(reply, 400, `healthcheck: ${parsed.reason}`);
    const { target } = parsed;
    const allowed = options.allowedPorts;
    if (allowed !== undefined && !allowed.has(target.port)) {
      const list = [...allowed].sort((a, b) => a - b).join(', ') || 'none';
      return answer(reply, 403, `healthcheck: port ${target.port} is not allowed; allowed ports: ${list}`);
    }
    const handler: ProbeHandler =
      target.type === 'tcp'
        ? { type: 'tcpSocket', port: target.port }
        : { type: 'httpGet', scheme: 'HTTP', port: target.port, path: target.path, httpHeaders: [] };
    const fields = { kind: 'healthcheck', target: `${handler.type}:${target.port}` };
    return run(request, reply, 'healthcheck', handler, timeoutSecondsFor(table, target.port), fields);
  });

  app.get(HEALTHZ_PATH, async (request, reply) => {
    const here = role(request);
    if (here !== undefined && here !== 'healthcheck') return notFound(request, reply);
    return options.isReady()
      ? answer(reply, 200, 'ok')
      : answer(reply, 503, 'not ready: listeners starting or draining');
  });

  function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const paths = pathsFor(role(request), table);
    const path = request.url.split('?')[0] ?? request.url;
    if (request.method !== 'GET' && request.method !== 'HEAD' && paths.some((p) => p === path)) {
      return answer(
        reply.header('allow', 'GET, HEAD'),
        405,
        `method ${request.method} is not allowed on ${path}; use GET`,
      );
    }
    return answer(
      reply,
      404,
      `no such path ${JSON.stringify(path)} on this port; paths: ${paths.join(', ')}`,
    );
  }

  app.setNotFoundHandler(notFound);
  app.setErrorHandler((err: FastifyError, _request, reply) => {
    const code = err.statusCode ?? 500;
    const status = code >= 400 && code < 500 ? code : 500;
    if (status === 500) log.error({ err }, 'request failed');
    return answer(reply, status, `${status === 500 ? 'internal error' : 'bad request'}: ${err.message}`);
  });
  return app;
}
