// A real pino logger whose lines the test reads back: every line kept, and a promise for the first one to match.

import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';

export type LogLine = Record<string, unknown>;

export interface LogCapture {
  log: Logger;
  lines: LogLine[];
  /** Resolves with the first line (already written or still to come) that matches. */
  line(match: (line: LogLine) => boolean): Promise<LogLine>;
}

export function captureLog(): LogCapture {
  const lines: LogLine[] = [];
  const waiters = new Set<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const text of String(chunk).split('\n')) {
        if (text === '') continue;
        const parsed = JSON.parse(text) as LogLine;
        lines.push(parsed);
        for (const waiter of waiters) {
          if (!waiter.match(parsed)) continue;
          waiters.delete(waiter);
          waiter.resolve(parsed);
        }
      }
      done();
    },
  });
  return {
    log: createLogger('debug', sink),
    lines,
    line: (match) => {
      const found = lines.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.add({ match, resolve }));
    },
  };
}
