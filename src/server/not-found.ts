// What no route answers, through Fastify's not-found handling: an unknown path or a kind's path on another kind's
// listener gets 404 listing the paths this listener serves; another method than GET/HEAD on one of them, 405.

import type { Socket } from 'node:net';
import type { ListenerRole } from '../scheme.js';
import type { ProbeTable } from '../table/types.js';
import type { CompanionFastify } from './instance.js';
import { answer } from './plain-answer.js';
import { pathsFor } from './routing.js';

export function registerNotFound(
  app: CompanionFastify,
  table: ProbeTable | undefined,
  roleOf: (socket: Socket) => ListenerRole | undefined,
): void {
  app.setNotFoundHandler((request, reply) => {
    const url = request.url;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const paths = pathsFor(roleOf(request.raw.socket), table);
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
}
