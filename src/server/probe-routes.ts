// kubelet's rewritten probes: `GET /osm-<kind>-probe[/<container>]`, each kind only on its own listener
// (15901-15903), answered by running that table entry.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { PROBE_KINDS, type ProbeKind, probePath } from '../scheme.js';
import type { ProbeTable } from '../table/types.js';
import type { Forward } from './forwarder.js';
import type { CompanionFastify } from './instance.js';
import { answer } from './plain-answer.js';
import { selectEntry } from './routing.js';

/** Answers a request for the table's `kind` entry of `container` (undefined: the kind's only one). */
export type ServeEntry = (
  request: FastifyRequest,
  reply: FastifyReply,
  kind: ProbeKind,
  container: string | undefined,
) => FastifyReply | Promise<FastifyReply>;

export function entryServer(table: ProbeTable | undefined, forward: Forward): ServeEntry {
  return (request, reply, kind, container) => {
    const selection = selectEntry(table, kind, container);
    if (!selection.ok) return answer(reply, selection.status, `${kind}: ${selection.reason}`);
    const { entry } = selection;
    const fields = () => ({
      kind,
      container: entry.container,
      target: `${entry.handler.type}:${entry.handler.port}`,
    });
    return forward(
      request,
      reply,
      `${kind} ${entry.container}`,
      entry,
      entry.handler,
      entry.timeoutSeconds,
      fields,
    );
  };
}

export function registerProbeRoutes(app: CompanionFastify, serveEntry: ServeEntry): void {
  for (const kind of PROBE_KINDS) {
    const constraints = { listener: kind };
    app.get(probePath(kind), { constraints }, (request, reply) => {
      return serveEntry(request, reply, kind, undefined);
    });
    app.get<{ Params: { container: string } }>(
      `${probePath(kind)}/:container`,
      { constraints },
      (request, reply) => {
        return serveEntry(request, reply, kind, request.params.container);
      },
    );
  }
}
