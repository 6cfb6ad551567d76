// The hot path every probe route ends in: one probe run for one request, within the per-listener gate, kubelet's
// User-Agent passed on, the verdict turned into what kubelet reads, a failure logged within the line budget.
//   kubelet -> HTTP -> listener -> Fastify route -> forward -> prober (HTTP / TCP / gRPC) -> app container

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

export interface ForwarderOptions {
  /** POD_IP or 127.0.0.1: what kubelet itself would dial. */
  targetHost: string;
  prober: Prober;
  log: Logger;
  /** Which listener a connection came in on; a connection with none reaches only /osm-healthcheck. */
  roleOf: (socket: Socket) => ListenerRole | undefined;
  /** Upstream probes in flight per listener; more are refused at once so a flood on one port can't starve another. */
  maxProbesPerListener: number;
  /** Counts probe runs (verdict, duration, failure reason), refusals, probes in flight and header checks. */
  recorder: Recorder;
}

/**
 * Runs `handler` for this request and answers it. `label` starts the answer's line, `recorded` is what the run
 * counts as in /metrics, `fields` the log line's fields (only built for a line that is written).
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

const KUBELET_UA = /^kube-probe\/\d+\.\d+$/;
// Failure lines per second before a flood's are only counted: a line costs more than the probe it reports.
const FAILURE_LINES_PER_SECOND = 100;

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

  return async (request, reply, label, recorded, handler, timeoutSeconds, fields) => {
    const role = roleOf(request.raw.socket);
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
    recorder.probeRun(recorded, result, started, (performance.now() - started) / 1000);
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
  };
}
