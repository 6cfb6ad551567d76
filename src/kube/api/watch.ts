// One watch (`?watch=1`) of the API server read as events: each line of the streamed answer parsed into
// {type, object} and handed on as it arrives; an event the handler refuses (a 410 ERROR event, a broken line) ends
// the watch with the handler's error. The reflector (reflector.ts) keeps a collection with it.

import { request } from 'node:https';
import { isObject } from '../../json.js';
import { type Refusal, refusalOf } from './reply.js';
import { type ApiServer, NoAnswer, requestOptions } from './transport.js';

/** The part of an object every kind has; the rest is read by whoever keeps it. */
export interface KubeObject {
  metadata?: { name?: unknown; namespace?: unknown; resourceVersion?: unknown; [field: string]: unknown };
  [field: string]: unknown;
}

/** A watch event or a line of one longer than this ends the watch. */
const MAX_EVENT = 1024 * 1024;

export interface WatchRequest {
  server: ApiServer;
  path: string;
  /** `watch namespaces`: names the watch in errors. */
  what: string;
  /** Nothing at all for this long ends the watch (a half-open connection). */
  idleMs: number;
  /** Each event; what it throws ends the watch and is thrown from watch(). */
  onEvent: (type: unknown, object: KubeObject) => void;
  /** Ends the watch (close). */
  signal: AbortSignal;
}

/** How a watch ended, with how many events it carried: the API server ended it (its timeoutSeconds), or refused it. */
export type WatchEnd = ({ ok: true } | Refusal) & { events: number };

/** `line` as an event, else an Error naming the watch and the start of the line. */
function eventOf(line: string, what: string): { type: unknown; object: KubeObject } {
  try {
    const value: unknown = JSON.parse(line);
    if (isObject(value)) return { type: value.type, object: (value.object ?? {}) as KubeObject };
  } catch {}
  throw new Error(`${what}: the answer is not a JSON object: ${line.slice(0, 120)}`);
}

/**
 * Until the stream ends. Rejects, naming the request, on a connection or TLS failure, an event over MAX_EVENT,
 * nothing at all within `idleMs`, `signal` (close), or what onEvent throws.
 */
export async function watch(options: WatchRequest): Promise<WatchEnd> {
  const { signal, what } = options;
  const url = new URL(options.path, options.server.url);
  const authorised = await requestOptions(options.server, 'GET', 'application/json', false);
  // Closed while a list or the credentials were read: an abort listener added now would never fire, and the
  // watch would keep the process alive until its idle timeout.
  if (signal.aborted) throw new Error(`${what}: closed`);
  let events = 0;
  let failure: unknown;
  return new Promise<WatchEnd>((resolve, reject) => {
    const fail = (err: Error) => reject(failure ?? new NoAnswer(url, err.message, 'GET', { cause: err }));
    const onLine = (line: string) => {
      if (line === '' || failure !== undefined) return;
      events += 1;
      try {
        const event = eventOf(line, what);
        options.onEvent(event.type, event.object);
      } catch (err) {
        failure = err;
        req.destroy(err as Error);
      }
    };
    const req = request(url, authorised, (res) => {
      const ok = res.statusCode === 200;
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        idle.refresh();
        pending += chunk;
        if (pending.length > MAX_EVENT)
          return void req.destroy(new Error(`a watch event over ${MAX_EVENT} bytes`));
        for (let newline = pending.indexOf('\n'); ok && newline >= 0; newline = pending.indexOf('\n')) {
          onLine(pending.slice(0, newline).trim());
          pending = pending.slice(newline + 1);
        }
      });
      res.on('end', () => {
        clearTimeout(idle);
        if (ok) onLine(pending.trim());
        if (failure !== undefined) return void reject(failure);
        resolve(ok ? { ok: true, events } : { ...refusalOf(res.statusCode ?? 0, pending), events });
      });
      res.on('error', fail);
    });
    // An answer that stops moving (a half-open connection) is no watch: the API server closes a quiet one at its
    // timeoutSeconds, and sends bookmarks meanwhile.
    const idle = setTimeout(
      () => req.destroy(new Error(`nothing within ${options.idleMs} ms`)),
      options.idleMs,
    );
    const abort = () => req.destroy(new Error('closed'));
    signal.addEventListener('abort', abort, { once: true });
    req.on('close', () => signal.removeEventListener('abort', abort));
    req.on('error', (err) => {
      clearTimeout(idle);
      fail(err);
    });
    req.end();
  });
}
