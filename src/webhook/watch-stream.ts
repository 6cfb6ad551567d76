// One watch of the API server read as events: each line of kubeWatch's stream parsed into {type, object} and handed
// on; an event the handler refuses (a 410 ERROR event, a broken line) ends the watch with the handler's error.

import { type KubeAnswer, type KubeApi, kubeWatch } from './kube-api.js';

/** The part of an object every kind has; the rest is read by whoever keeps it. */
export interface KubeObject {
  metadata?: { name?: unknown; namespace?: unknown; resourceVersion?: unknown; [field: string]: unknown };
  [field: string]: unknown;
}

type Json = Record<string, unknown>;

/** `text` as a JSON object, else an Error naming `what` and the start of the text. */
export function parseObject(text: string, what: string): Json {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Json;
  } catch {}
  throw new Error(`${what}: the answer is not a JSON object: ${text.slice(0, 120)}`);
}

/** `answered 403: <the Status's message>`, or the first line of a body that is no Status. */
export function statusLine(status: number, text: string): string {
  let message = text.split('\n')[0]?.slice(0, 200) ?? '';
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') message = parsed.message;
  } catch {}
  return `answered ${status}${message === '' ? '' : `: ${message}`}`;
}

export interface WatchOnceOptions {
  api: KubeApi;
  path: string;
  /** `watch namespaces`: names the watch in errors. */
  what: string;
  /** Nothing at all for this long ends the watch (a half-open connection). */
  idleMs: number;
  /** Each event; what it throws ends the watch and is thrown from watchOnce. */
  onEvent: (type: unknown, object: KubeObject) => void;
  /** Ends the watch (close). */
  signal: AbortSignal;
}

/** Until the stream ends: its status (and body when not 200), and how many events it carried. */
export async function watchOnce(options: WatchOnceOptions): Promise<KubeAnswer & { events: number }> {
  // Closed while a list was in flight: an abort listener added now would never fire.
  if (options.signal.aborted) throw new Error(`${options.what}: closed`);
  let events = 0;
  let failure: unknown;
  const watching = new AbortController();
  const onStop = () => watching.abort();
  options.signal.addEventListener('abort', onStop, { once: true });
  try {
    const answer = await kubeWatch(
      options.api,
      options.path,
      options.idleMs,
      (line) => {
        if (failure !== undefined) return;
        events += 1;
        try {
          const event = parseObject(line, options.what);
          options.onEvent(event.type, (event.object ?? {}) as KubeObject);
        } catch (err) {
          failure = err;
          watching.abort();
        }
      },
      watching.signal,
    ).catch((err: unknown) => {
      if (failure === undefined) throw err;
      return undefined;
    });
    if (failure !== undefined) throw failure;
    return { ...(answer as KubeAnswer), events };
  } finally {
    options.signal.removeEventListener('abort', onStop);
  }
}
