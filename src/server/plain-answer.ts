// The companion's own answers (every one but a relayed Warning, relayed-answer.ts): one plain-text line.

import type { FastifyReply } from 'fastify';

const TEXT = 'text/plain; charset=utf-8';

export function answer(reply: FastifyReply, status: number, line: string): FastifyReply {
  return reply.code(status).header('content-type', TEXT).send(`${line}\n`);
}
