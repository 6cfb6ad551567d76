// The companion's own answers (every one but a relayed Warning, relayed-answer.ts): one plain-text line. No route
// reads a body: a request that sends one has its connection closed after the answer instead of drained first.

import type { FastifyReply, FastifyRequest } from 'fastify';

const TEXT = 'text/plain; charset=utf-8';

export function answer(reply: FastifyReply, status: number, line: string): FastifyReply {
  return reply.code(status).header('content-type', TEXT).send(`${line}\n`);
}

/** No route reads a body: rather than drain one before the next request, close the connection after the answer. */
export function closeIfBody(request: FastifyRequest, reply: FastifyReply): void {
  const headers = request.headers;
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) {
    reply.raw.shouldKeepAlive = false;
  }
}
