// The companion's own status, on the healthcheck listener (15904) only: `GET /healthz` (200 once all four
// listeners are up, 503 while starting or draining) and `GET /metrics` (Prometheus text, loaded on first scrape).

import type { Logger } from '../log.js';
import type { Exposition } from '../metrics/registry.js';
import { HEALTHZ_PATH, METRICS_PATH } from '../scheme.js';
import type { CompanionFastify } from './instance.js';
import { answer } from './plain-answer.js';

export interface StatusOptions {
  log: Logger;
  /** True once all four listeners are up and until shutdown starts. */
  isReady: () => boolean;
  /** The Prometheus exposition of the recorder, loaded on the first GET /metrics (metrics/load-exposition.ts). */
  exposition: () => Promise<Exposition>;
}

export function registerStatusRoutes(app: CompanionFastify, options: StatusOptions): void {
  const { log } = options;
  const constraints = { listener: 'healthcheck' };
  app.get(HEALTHZ_PATH, { constraints }, (_request, reply) => {
    return options.isReady()
      ? answer(reply, 200, 'ok')
      : answer(reply, 503, 'not ready: listeners starting or draining');
  });
  app.get(METRICS_PATH, { constraints }, async (_request, reply) => {
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
}
