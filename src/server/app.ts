// The companion's routes (DESIGN.md §5) on bare node:http. Builds the server and never listens: listeners.ts
// binds ports.   kubelet -> HTTP -> this handler -> prober (HTTP / TCP / gRPC) -> app container
// No framework: five fixed routes don't need one, and Fastify cost 2.6× the floor's start-up (BENCHMARKS.md).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.js';
import { type ProbeResult, probeBudgetMs } from '../probe/result.js';
import type { Prober } from '../probe/run.js';
import { HTTP_PATH_HEADER, type ListenerRole, type ProbeKind } from '../scheme.js';
import type { ProbeHandler, ProbeTable } from '../table/types.js';
import { Gate } from './gate.js';
import { LineBudget } from './line-budget.js';
import { originalHeaders, parseOriginalHeaders } from './original-headers.js';
import { matchPath, pathsFor, portTimeouts, selectEntry } from './routing.js';

export interface AppOptions {
  /** undefined: no table configured; only header-driven probes are served. */
  table: ProbeTable | undefined;
  /** Ports header-driven probes may reach; undefined: any. */
  allowedPorts: ReadonlySet<number> | undefined;
  /** POD_IP or 127.0.0.1: what kubelet itself would dial. */
  targetHost: string;
  prober: Prober;
  log: Logger;
  /** Which listener a connection came in on; undefined serves every route. */
  roleOf: (socket: Socket) => ListenerRole | undefined;
  /** True once all four listeners are up and until shutdown starts. */
  isReady: () => boolean;
  /** Upstream probes in flight per listener; more are refused at once so a flood on one port can't starve another. */
  maxProbesPerListener: number;
}

export interface App {
  /** The HTTP server behind the routes: listeners.ts hands it connections, it never listens itself. */
  server: Server;
  /** Cuts any connection still open; listeners.ts has normally drained them all by then. */
  close(): Promise<void>;
}

// Hard limits (DESIGN.md §5): no request may hold a connection long, and nothing large is read (no route
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

function answer(res: ServerResponse, status: number, line: string, allow?: string): void {
  const body = `${line}\n`;
  const headers: Record<string, string | number> = {
    'content-type': TEXT,
    'content-length': Buffer.byteLength(body),
  };
  if (allow !== undefined) headers.allow = allow;
  res.writeHead(status, headers).end(body);
}

export function buildApp(options: AppOptions): App {
  const { table, prober, log, roleOf, allowedPorts } = options;
  const gates = new Map<ListenerRole | undefined, Gate>();
  const gateFor = (role: ListenerRole | undefined): Gate => {
    let gate = gates.get(role);
    if (gate === undefined) {
      gate = new Gate(options.maxProbesPerListener);
      gates.set(role, gate);
    }
    return gate;
  };
  // Worked out once from the table: header-driven probes are on the hot path.
  const timeouts = portTimeouts(table);
  const timeoutFor = (port: number): number => timeouts.get(port) ?? 1;

  const budget = new LineBudget(FAILURE_LINES_PER_SECOND);
  let summaryDue = false;
  function warnFailure(fields: () => Record<string, unknown>, reason: string, msg: string): void {
    if (budget.take(Date.now())) {
      log.warn({ ...fields(), reason }, msg);
      return;
    }
    if (summaryDue) return;
    summaryDue = true;
    setTimeout(() => {
      summaryDue = false;
      const notLogged = budget.drain();
      log.warn({ notLogged, perSecond: budget.perSecond }, 'probe failures over the log budget not logged');
    }, 1000).unref();
  }

  async function run(
    req: IncomingMessage,
    res: ServerResponse,
    gate: Gate,
    label: string,
    handler: ProbeHandler,
    timeoutSeconds: number,
    fields: () => Record<string, unknown>,
  ): Promise<void> {
    if (!gate.enter()) {
      warnFailure(fields, 'too many concurrent probes', 'probe refused');
      return answer(res, 503, `${label}: refused: ${gate.limit} probes already in flight on this port`);
    }
    let result: ProbeResult;
    try {
      const ua = req.headers['user-agent'];
      const userAgent = ua !== undefined && KUBELET_UA.test(ua) ? ua : undefined;
      result = await prober(
        handler,
        { host: options.targetHost, timeoutMs: probeBudgetMs(timeoutSeconds) },
        userAgent,
      );
    } finally {
      gate.leave();
    }
    if (result.verdict === 'failure') warnFailure(fields, result.message, 'probe failed');
    else if (log.isLevelEnabled('debug')) log.debug({ ...fields(), result: result.message }, 'probe passed');
    answer(res, result.status, `${label}: ${result.message}`);
  }

  function healthcheck(req: IncomingMessage, res: ServerResponse, here: ListenerRole | undefined) {
    const parsed = parseOriginalHeaders(originalHeaders(req.rawHeaders));
    if (!parsed.ok) return answer(res, 400, `healthcheck: ${parsed.reason}`);
    const { target } = parsed;
    if (target.type === 'self') return wrappedRoute(req, res, here, target.path);
    if (allowedPorts !== undefined && !allowedPorts.has(target.port)) {
      const list = [...allowedPorts].sort((a, b) => a - b).join(', ') || 'none';
      return answer(res, 403, `healthcheck: port ${target.port} is not allowed; allowed ports: ${list}`);
    }
    const handler: ProbeHandler =
      target.type === 'tcp'
        ? { type: 'tcpSocket', port: target.port }
        : { type: 'httpGet', scheme: 'HTTP', port: target.port, path: target.path, httpHeaders: [] };
    const fields = () => ({ kind: 'healthcheck', target: `${handler.type}:${target.port}` });
    return run(req, res, gateFor(here), 'healthcheck', handler, timeoutFor(target.port), fields);
  }

  function probe(
    req: IncomingMessage,
    res: ServerResponse,
    here: ListenerRole | undefined,
    kind: ProbeKind,
    container: string | undefined,
  ) {
    const selection = selectEntry(table, kind, container);
    if (!selection.ok) return answer(res, selection.status, `${kind}: ${selection.reason}`);
    const { entry } = selection;
    const fields = () => ({
      kind,
      container: entry.container,
      target: `${entry.handler.type}:${entry.handler.port}`,
    });
    const label = `${kind} ${entry.container}`;
    return run(req, res, gateFor(here), label, entry.handler, entry.timeoutSeconds, fields);
  }

  /** osm-edge's wrap of one of our own probe paths (original-headers.ts): serve that path's entry. */
  function wrappedRoute(
    req: IncomingMessage,
    res: ServerResponse,
    here: ListenerRole | undefined,
    wrapped: string,
  ) {
    const match = matchPath(wrapped.split('?')[0] ?? wrapped);
    if (match?.route !== 'probe') {
      return answer(
        res,
        400,
        `healthcheck: ${HTTP_PATH_HEADER} ${JSON.stringify(wrapped)} names this companion but none of its probe paths`,
      );
    }
    return probe(req, res, here, match.kind, match.container);
  }

  function notFound(req: IncomingMessage, res: ServerResponse, here: ListenerRole | undefined, path: string) {
    const paths = pathsFor(here, table);
    if (req.method !== 'GET' && req.method !== 'HEAD' && paths.includes(path)) {
      return answer(res, 405, `method ${req.method} is not allowed on ${path}; use GET`, 'GET, HEAD');
    }
    answer(res, 404, `no such path ${JSON.stringify(path)} on this port; paths: ${paths.join(', ')}`);
  }

  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    // No route reads a body: rather than drain one before the next request, close the connection after the answer.
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) {
      res.shouldKeepAlive = false;
    }
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const here = roleOf(req.socket);
    const match = matchPath(path);
    if (match === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return notFound(req, res, here, path);
    }
    switch (match.route) {
      case 'healthcheck':
        return healthcheck(req, res, here);
      case 'healthz':
        if (here !== undefined && here !== 'healthcheck') return notFound(req, res, here, path);
        return options.isReady()
          ? answer(res, 200, 'ok')
          : answer(res, 503, 'not ready: listeners starting or draining');
      case 'probe':
        if (here !== undefined && here !== match.kind) return notFound(req, res, here, path);
        return probe(req, res, here, match.kind, match.container);
    }
  }

  const server = createServer(
    {
      maxHeaderSize: LIMITS.maxHeaderBytes,
      headersTimeout: LIMITS.headersTimeoutMs,
      requestTimeout: LIMITS.requestTimeoutMs,
      keepAliveTimeout: LIMITS.keepAliveTimeoutMs,
      // Check for slow clients often: the default 30 s would let a slowloris hold sockets for that long.
      connectionsCheckingInterval: 500,
    },
    (req, res) => {
      try {
        handle(req, res)?.catch((err: unknown) => failed(res, err));
      } catch (err) {
        failed(res, err);
      }
    },
  );

  function failed(res: ServerResponse, err: unknown): void {
    log.error({ err }, 'request failed');
    if (res.headersSent) res.destroy();
    else answer(res, 500, `internal error: ${(err as Error)?.message ?? String(err)}`);
  }

  return {
    server,
    close: async () => server.closeAllConnections(),
  };
}
