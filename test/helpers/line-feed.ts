// The lines a process prints, kept as they come, with a wait for the first one a test expects: one piece for
// every helper that reads a child's stdout line by line (supervised.ts, e2e/processes.ts).

export interface LineFeed<T> {
  /** Every line so far. */
  lines: T[];
  /** A new line: kept, and given to every listener. */
  push(line: T): void;
  /** Calls `listener` with every line pushed from now on. */
  onLine(listener: (line: T) => void): void;
  /** Resolves with the first line (already pushed or still to come) that `match` accepts. */
  waitFor(match: (line: T) => boolean, timeoutMs: number): Promise<T>;
}

/**
 * A feed whose waits fail when `exited` settles first: `timedOut` and `exitedEarly` say why, with what the process
 * printed, at the moment the wait fails.
 */
export function lineFeed<T, E>(
  exited: Promise<E>,
  failure: { timedOut(timeoutMs: number): string; exitedEarly(exit: E): string },
): LineFeed<T> {
  const lines: T[] = [];
  const listeners = new Set<(line: T) => void>();
  return {
    lines,
    push: (line) => {
      lines.push(line);
      for (const listener of listeners) listener(line);
    },
    onLine: (listener) => {
      listeners.add(listener);
    },
    waitFor: (match, timeoutMs) =>
      new Promise((resolve, reject) => {
        const seen = lines.find(match);
        if (seen !== undefined) return resolve(seen);
        const done = (fn: () => void) => {
          clearTimeout(timer);
          listeners.delete(listener);
          fn();
        };
        const listener = (line: T) => {
          if (match(line)) done(() => resolve(line));
        };
        const timer = setTimeout(() => done(() => reject(new Error(failure.timedOut(timeoutMs)))), timeoutMs);
        listeners.add(listener);
        exited.then((exit) => done(() => reject(new Error(failure.exitedEarly(exit)))));
      }),
  };
}
