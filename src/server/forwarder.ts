// The hot path every probe route ends in: a request joins its probe's shared check (shared-checks.ts: one check
// of the app at a time per probe, fresh within 100 ms, or the next one, or at the request's deadline the one running
// when it arrived) or begins one within the listener's fair gate (gate.ts);
// kubelet's User-Agent passed on, the verdict turned into what kubelet reads, a failed check logged within the line
// budget.
//   kubelet -> HTTP -> listener -> Fastify route -> forward -> shared check -> prober (HTTP / TCP / gRPC) -> app

import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../log.js';
import type { HeaderProbe, Recorder } from '../metrics/recorder.js';
import { type ProbeResult, probeBudgetMs } from '../probe/result.js';
import type { Prober } from '../probe/run.js';
import type { ListenerRole } from '../scheme.js';
import type { ProbeEntry, ProbeHandler } from '../table/types.js';
import { Gate } from './gate.js';
import { budgetedWarn } from './line-budget.js';
import { answer } from './plain-answer.js';
import { sendRelayed } from './relayed-answer.js';
import { SharedChecks } from './shared-checks.js';
import { sourceOf } from './source-shares.js';

export interface ForwarderOptions {
  /** POD_IP or 127.0.0.1: what kubelet itself would dial. */
  targetHost: string;
  prober: Prober;
  log: Logger;
  /** Which listener a connection came in on; a connection with none reaches only /osm-healthcheck. */
  roleOf: (socket: Socket) => ListenerRole | undefined;
  /** Checks of the app in flight per listener, shared fairly by the callers' addresses (gate.ts). */
  maxProbesPerListener: number;
  /**
   * Counts checks (verdict, duration, failure reason), refusals, checks in flight, shared answers (and those of
   * them given at a request's deadline), header checks.
   */
  recorder: Recorder;
  /** How old a check may be at a request's arrival to answer it (shared-checks.ts); default FRESH_MS. */
  sharedCheckWindowMs?: number;
}

/**
 * Runs `handler` for this request and answers it. `label` starts the answer's line, `recorded` is what the run
 * counts as in /metrics (a table entry, whose own check it is, or a header-driven probe, whose check is that of
 * every request naming the same handler), `fields` the log line's fields (only built for a line that is written).
 */
export type Forward = (
  request: FastifyRequest,
  reply: FastifyReply,
  label: string,
  recorded: ProbeEntry | HeaderProbe,
  handler: ProbeHandler,
  timeoutSeconds: number,
  fields: () => Record<string, unknown>,
) => Promise<FastifyReply>;

/** A check's outcome: the app's verdict, or no check at all (the gate was full). */
type Checked = { ran: true; result: ProbeResult } | { ran: false; limit: number };

const KUBELET_UA = /^kube-probe\/\d+\.\d+$/;
// Failure lines per second before a flood's are only counted: a line costs more than the probe it reports.
const FAILURE_LINES_PER_SECOND = 100;

/** Header-driven requests naming the same probe share its check: a header rule gives one handler per port and path. */
function headerKey(handler: ProbeHandler, timeoutSeconds: number): string {
  const path = handler.type === 'httpGet' ? handler.path : '';
  return `${handler.type} ${handler.port} ${timeoutSeconds} ${path}`;
}

export function probeForwarder(options: ForwarderOptions): Forward {
  const { prober, log, roleOf, recorder } = options;
  const gates = new Map<ListenerRole | undefined, Gate>();
  const gateFor = (role: ListenerRole | undefined): Gate => {
    let gate = gates.get(role);
    if (gate === undefined) {
      gate = new Gate(options.maxProbesPerListener);
      gates.set(role, gate);
    }
    return gate;
  };
  const warnFailure = budgetedWarn(log, FAILURE_LINES_PER_SECOND);
  const checks = new SharedChecks<ProbeEntry | string, string, Checked>(options.sharedCheckWindowMs);

  /** One check of the app, begun for `sources` on `role`'s listener. */
  async function check(
    role: ListenerRole | undefined,
    sources: ReadonlySet<string>,
    recorded: ProbeEntry | HeaderProbe,
    handler: ProbeHandler,
    timeoutSeconds: number,
    userAgent: string | undefined,
    fields: () => Record<string, unknown>,
  ): Promise<Checked> {
    const gate = gateFor(role);
    const ticket = gate.enter(sources);
    if (ticket === undefined) {
      recorder.gateRefused(role);
      warnFailure(fields, 'too many concurrent probes', 'probe refused');
      return { ran: false, limit: gate.limit };
    }
    let result: ProbeResult;
    recorder.inFlight(role, 1);
    const started = performance.now();
    try {
      result = await prober(
        handler,
        { host: options.targetHost, timeoutMs: probeBudgetMs(timeoutSeconds) },
        userAgent,
      );
    } finally {
      gate.leave(ticket);
      recorder.inFlight(role, -1);
    }
    recorder.probeRun(recorded, result, started, (performance.now() - started) / 1000);
    if (result.verdict === 'failure') warnFailure(fields, result.message, 'probe failed');
    else if (result.verdict === 'warning') warnFailure(fields, result.message, 'probe warning');
    else if (log.isLevelEnabled('debug')) log.debug({ ...fields(), result: result.message }, 'probe passed');
    return { ran: true, result };
  }

  return async (request, reply, label, recorded, handler, timeoutSeconds, fields) => {
    const socket = request.raw.socket;
    const role = roleOf(socket);
    const ua = request.headers['user-agent'];
    const userAgent = ua !== undefined && KUBELET_UA.test(ua) ? ua : undefined;
    const key = typeof recorded === 'string' ? headerKey(handler, timeoutSeconds) : recorded;
    // Its check's budget from now bounds the request's deadline: answered by then, it reaches kubelet in time.
    const { value: checked, by } = await checks.join(
      key,
      sourceOf(socket.remoteAddress),
      probeBudgetMs(timeoutSeconds),
      (sources) => check(role, sources, recorded, handler, timeoutSeconds, userAgent, fields),
    );
    if (by !== 'own') recorder.sharedAnswer(role);
    if (by === 'running') recorder.deadlineAnswer(role);
    if (!checked.ran) {
      return answer(reply, 503, `${label}: refused: ${checked.limit} probes already in flight on this port`);
    }
    const { result } = checked;
    const line = `${label}: ${result.message}`;
    // kubelet's event shows the app's body for a Warning, as without the mesh; our reason is in a header.
    if (result.verdict === 'warning') return sendRelayed(reply, result.status, result.appBody, line);
    return answer(reply, result.status, line);
  };
}
