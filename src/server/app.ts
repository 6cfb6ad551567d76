// The companion's routes (docs/architecture.md#serve-routes-and-verdicts) as one Fastify instance. Builds the app and never listens: listeners.ts
// binds the four ports and hands plain-HTTP connections to `app.server`.
//   kubelet -> HTTP -> listener -> Fastify route -> prober (HTTP / TCP / gRPC) -> app container

import type { Socket } from 'node:net';
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from '../log.js';
import type { HeaderProbe, Recorder } from '../metrics/recorder.js';
import type { Exposition } from '../metrics/registry.js';
import { type ProbeResult, probeBudgetMs } from '../probe/result.js';
import type { Prober } from '../probe/run.js';
import {
  HEALTHCHECK_PATH,
  HEALTHZ_PATH,
  HTTP_PATH_HEADER,
  type ListenerRole,
  METRICS_PATH,
  PROBE_KINDS,
  type ProbeKind,
  probePath,
} from '../scheme.js';
import type { ProbeEntry, ProbeHandler, ProbeTable } from '../table/types.js';
import { Gate } from './gate.js';
import { budgetedWarn } from './line-budget.js';
import { listenerConstraint } from './listener-constraint.js';
import { originalHeaders, parseOriginalHeaders } from './original-headers.js';
import { sendRelayed } from './relayed-answer.js';
import { matchPath, pathsFor, portTimeouts, selectEntry } from './routing.js';
import { LEAN_SCHEMA_CONTROLLER } from './schema-free.js';

export interface AppOptions {
  /** undefined: no table configured; only header-driven probes are served. */
  table: ProbeTable | undefined;
  /** Ports header-driven probes may reach; undefined: any. */
  allowedPorts: ReadonlySet<number> | undefined;
  /** POD_IP or 127.0.0.1: what kubelet itself would dial. */
  targetHost: string;
  prober: Prober;
  log: Logger;
  /** Which listener a connection came in on; a connection with none reaches only /osm-healthcheck. */
  roleOf: (socket: Socket) => ListenerRole | undefined;
  /** True once all four listeners are up and until shutdown starts. */
  isReady: () => boolean;
  /** Upstream probes in flight per listener; more are refused at once so a flood on one port can't starve another. */
  maxProbesPerListener: number;
  /** Counts probe runs, refusals, probes in flight and header checks for /metrics. */
  recorder: Recorder;
  /** The Prometheus exposition of `recorder`, loaded on the first GET /metrics (metrics/load-exposition.ts). */
  exposition: () => Promise<Exposition>;
}

export interface App {
  /** The HTTP server behind the routes: listeners.ts hands it connections, it never listens itself. */
  server: import('node:http').Server;
  /** Fastify's close: requests still arriving on open connections get 503, idle connections are closed. */
  close(): Promise<void>;
}

// Hard limits (docs/architecture.md#hard-limits): no request may hold a connection long, and nothing large is read (no route
// reads a body, and a request that sends one gets its connection closed after the answer).
export const LIMITS = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
} as const;

const KUBELET_UA = /^kube-probe\/\d+\.\d+$/;
// Failure lines per second before a flood's are only counted: a line costs more than the probe it reports.
const FAILURE_LINES_PER_SECOND = 100;
const TEXT = 'text/plain; charset=utf-8';

type Request = FastifyRequest;
type Reply = FastifyReply;

function answer(reply: Reply, status: number, line: string): Reply {
  return reply.code(status).header('content-type', TEXT).send(`${line}\n`);
}

/** No route reads a body: rather than drain one before the next request, close the connection after the answer. */
function closeIfBody(request: Request, reply: Reply): void {
  const headers = request.headers;
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) {
    reply.raw.shouldKeepAlive = false;
  }
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { table, prober, log, roleOf, allowedPorts, recorder } = options;
  const gates = new Map<ListenerRole | undefined, Gate>();
  const gateFor = (role: ListenerRole | undefined): Gate => {
    let gate = gates.get(role);
    if (gate === undefined) {
      gate = new Gate(options.maxProbesPerListener);
      gates.set(role, gate);
    }
    return gate;
  };
  const timeoutFor = portTimeouts(table);
  const here = (request: Request) => roleOf(request.raw.socket);

  const warnFailure = budgetedWarn(log, FAILURE_LINES_PER_SECOND);

  async function run(
    request: Request,
    reply: Reply,
    label: string,
    recorded: ProbeEntry | HeaderProbe,
    handler: ProbeHandler,
    timeoutSeconds: number,
    fields: () => Record<string, unknown>,
  ): Promise<Reply> {
    const role = here(request);
    const gate = gateFor(role);
    if (!gate.enter()) {
      recorder.gateRefused(role);
      warnFailure(fields, 'too many concurrent probes', 'probe refused');
      return answer(reply, 503, `${label}: refused: ${gate.limit} probes already in flight on this port`);
    }
    let result: ProbeResult;
    recorder.inFlight(role, 1);
    const started = performance.now();
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
      recorder.inFlight(role, -1);
    }
    recorder.probeRun(recorded, result.verdict, (performance.now() - started) / 1000);
    const line = `${label}: ${result.message}`;
    switch (result.verdict) {
      case 'failure':
        warnFailure(fields, result.message, 'probe failed');
        return answer(reply, result.status, line);
      case 'warning':
        // kubelet's event now shows the app's body, as without the mesh; our reason is in the log and a header.
        warnFailure(fields, result.message, 'probe warning');
        return sendRelayed(reply, result.status, result.appBody, line);
      case 'success':
        if (log.isLevelEnabled('debug')) log.debug({ ...fields(), result: result.message }, 'probe passed');
        return answer(reply, result.status, line);
    }
  }

  function probe(request: Request, reply: Reply, kind: ProbeKind, container: string | undefined) {
    const selection = selectEntry(table, kind, container);
    if (!selection.ok) return answer(reply, selection.status, `${kind}: ${selection.reason}`);
    const { entry } = selection;
    const fields = () => ({
      kind,
      container: entry.container,
      target: `${entry.handler.type}:${entry.handler.port}`,
    });
    return run(
      request,
      reply,
      `${kind} ${entry.container}`,
      entry,
      entry.handler,
      entry.timeoutSeconds,
      fields,
    );
  }

  function healthcheck(request: Request, reply: Reply) {
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
    const fields = () => ({ kind: 'healthcheck', target: `${handler.type}:${target.port}` });
    return run(request, reply, 'healthcheck', handler.type, handler, timeoutFor(target.port), fields);
  }

  /** osm-edge's wrap of one of our own probe paths (original-headers.ts): serve that path's entry. */
  function wrapped(request: Request, reply: Reply, path: string) {
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
    return probe(request, reply, match.kind, match.container);
  }

  const app = Fastify({
    loggerInstance: log,
    // One line per failed probe is the log's job (above); per-request lines and per-request child loggers would
    // cost more than the probe itself on the hot path.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger) => logger,
    return503OnClosing: true,
    // Schema-free routes: Fastify need not load (nor the bundle carry) Ajv or fast-json-stringify.
    schemaController: LEAN_SCHEMA_CONTROLLER,
    routerOptions: {
      // Paths are matched exactly as sent (docs/architecture.md#serve-routes-and-verdicts): no trailing-slash or duplicate-slash folding.
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

  app.get(HEALTHCHECK_PATH, (request, reply) => healthcheck(request, reply));
  app.get(HEALTHZ_PATH, { constraints: { listener: 'healthcheck' } }, (request, reply) => {
    closeIfBody(request, reply);
    return options.isReady()
      ? answer(reply, 200, 'ok')
      : answer(reply, 503, 'not ready: listeners starting or draining');
  });
  app.get(METRICS_PATH, { constraints: { listener: 'healthcheck' } }, async (request, reply) => {
    closeIfBody(request, reply);
    try {
      const exposition = await options.exposition();
      const text = await exposition.metrics();
      return reply.code(200).header('content-type', exposition.contentType).send(text);
    } catch (err) {
      log.error({ err }, 'metrics failed');
      // One line: a failed require's message goes on with its require stack.
      const [line] = (err instanceof Error ? err.message : String(err)).split('\n', 1);
      return answer(reply, 500, `metrics: ${line}`);
    }
  });
  for (const kind of PROBE_KINDS) {
    const constraints = { listener: kind };
    app.get(probePath(kind), { constraints }, (request, reply) => {
      closeIfBody(request, reply);
      return probe(request, reply, kind, undefined);
    });
    app.get<{ Params: { container: string } }>(
      `${probePath(kind)}/:container`,
      { constraints },
      (request, reply) => {
        closeIfBody(request, reply);
        return probe(request, reply, kind, request.params.container);
      },
    );
  }

  // Unknown paths, a kind's path on another kind's port, and methods other than GET/HEAD.
  app.setNotFoundHandler((request, reply) => {
    closeIfBody(request, reply);
    const url = request.url;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const paths = pathsFor(here(request), table);
    if (request.method !== 'GET' && request.method !== 'HEAD' && paths.includes(path)) {
      reply.header('allow', 'GET, HEAD');
      return answer(reply, 405, `method ${request.method} is not allowed on ${path}; use GET`);
    }
    return answer(
      reply,
      404,
      `no such path ${JSON.stringify(path)} on this port; paths: ${paths.join(', ')}`,
    );
  });

  app.setErrorHandler((err, _request, reply) => {
    log.error({ err }, 'request failed');
    return answer(reply, 500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
  });

  await app.ready();
  return {
    server: app.server,
    close: () => app.close(),
  };
}
