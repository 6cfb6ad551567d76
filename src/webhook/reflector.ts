// One collection of the API server kept in memory, as client-go's reflector keeps it: a paged list, then a watch
// from the list's resourceVersion (bookmarks move it on); 410 Gone lists again; any other failure, and a watch that
// ends at once without an event, watches again after a backoff, one log line each. The backoff grows until a watch
// works (delivers an event, or runs until the API server ends it), so a watch that keeps failing is not retried
// every second. Only what `keep` takes of each object is stored: node objects are large, their kubelet version small.

import type { Logger } from '../log.js';
import { BACKOFF, type Backoff, retryDelay } from './cluster-version.js';
import { type KubeApi, kubeRequest } from './kube-api.js';
import { type KubeObject, parseObject, statusLine, watchOnce } from './watch-stream.js';

export type { KubeObject } from './watch-stream.js';

/**
 * Signs of life of a collection, for the metrics: a complete list, an event (bookmarks too), and a watch the API
 * server ended at its timeoutSeconds. Each says the cache was current then.
 */
export type CacheActivity = 'listed' | 'event' | 'watch-ended';

/** What every cache built on reflectors is given: the API server, the log, and (tests) other timings. */
export interface WatchOptions {
  api: KubeApi;
  log: Logger;
  backoff?: Backoff;
  /** The watch's timeoutSeconds: the API server ends it then, and it is opened again at once. */
  watchSeconds?: number;
  /** Told of each sign of life of a collection, by its plural (`limitranges`). */
  activity?: (resource: string, what: CacheActivity) => void;
}

/** Only the WatchOptions of a cache's options, for its reflect() calls. */
export function watchOptions({ api, log, backoff, watchSeconds, activity }: WatchOptions): WatchOptions {
  return { api, log, backoff, watchSeconds, activity };
}

export interface ReflectorOptions<T> extends WatchOptions {
  /** The collection, across namespaces: `/api/v1/namespaces`, `/api/v1/limitranges`. */
  path: string;
  /** Its plural, in errors and log lines: `list limitranges answered 403`, `limitranges listed`. */
  resource: string;
  /** Its kind, in log lines: `LimitRange watch failed: ...`. */
  kind: string;
  /** What is kept of one object; undefined keeps nothing of it. */
  keep: (object: KubeObject, name: string) => T | undefined;
  /** What admissions miss while it was never listed, and while its watch is down: for the warning lines. */
  unlisted: string;
  lagging: string;
  /** Objects per list page: fewer for large objects (nodes), so a page stays well under LIST_BYTES. */
  pageSize?: number;
}

/** Kept objects by namespace (`''` for cluster-scoped ones), then by name. */
export type Store<T> = ReadonlyMap<string, ReadonlyMap<string, T>>;

export interface Reflector<T> {
  /** Now, without waiting; undefined until the first list is complete. */
  store(): Store<T> | undefined;
  /** Why the store is not there yet, or undefined once it is. */
  notListed(): string | undefined;
  /** Moves on at every change of the store: what is derived from it can be kept until then. */
  generation(): number;
  close(): void;
}

const PAGE = 100;
const LIST_TIMEOUT_MS = 10_000;
/** A page of 50 nodes of 80 KB (many images, many volumes) fits; the page is dropped once read. */
const LIST_BYTES = 8 * 1024 * 1024;
const WATCH_SECONDS = 300;
/** A watch ending sooner than this without an event is a failure (a proxy in the way), not its course run. */
const AT_ONCE_MS = 1000;

/** 410 Gone: the resourceVersion is older than the API server keeps; only a new list helps. */
class Expired extends Error {}

const identity = (object: KubeObject): [string, string] | undefined => {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const namespace = object.metadata?.namespace;
  return [typeof namespace === 'string' ? namespace : '', name];
};

export function reflect<T>(options: ReflectorOptions<T>): Reflector<T> {
  const { api, path, resource, kind, keep, log } = options;
  const backoff = options.backoff ?? BACKOFF;
  const watchSeconds = options.watchSeconds ?? WATCH_SECONDS;
  let store: Map<string, Map<string, T>> | undefined;
  let generation = 0;
  let resourceVersion: string | undefined;
  /** The last failure, while never listed. */
  let why: string | undefined;
  let closed = false;
  /** Failures since a watch last worked: the backoff and the `attempt` of the log line. */
  let failures = 0;
  /** 410s in a row without an event between: a second one waits, so a confused API server is not hammered. */
  let expiries = 0;
  const stop = new AbortController();

  const put = (target: Map<string, Map<string, T>>, object: KubeObject, deleted: boolean): void => {
    const id = identity(object);
    if (id === undefined) return;
    const [namespace, name] = id;
    const kept = deleted ? undefined : keep(object, name);
    const names = target.get(namespace);
    if (kept !== undefined) {
      if (names === undefined) target.set(namespace, new Map([[name, kept]]));
      else names.set(name, kept);
    } else if (names?.delete(name) && names.size === 0) {
      target.delete(namespace);
    }
  };

  async function list(): Promise<void> {
    const next = new Map<string, Map<string, T>>();
    let count = 0;
    let token: string | undefined;
    let version = '';
    do {
      const query = `limit=${options.pageSize ?? PAGE}${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`;
      const answer = await kubeRequest(
        api,
        'GET',
        `${path}?${query}`,
        LIST_TIMEOUT_MS,
        undefined,
        LIST_BYTES,
      );
      if (answer.status !== 200)
        throw new Error(`list ${resource} ${statusLine(answer.status, answer.text)}`);
      const page = parseObject(answer.text, `list ${resource}`);
      const metadata = (page.metadata ?? {}) as Record<string, unknown>;
      for (const item of Array.isArray(page.items) ? (page.items as KubeObject[]) : []) {
        put(next, item, false);
        count += 1;
      }
      version = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : version;
      token =
        typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
    } while (token !== undefined);
    // Swapped whole: admissions see the old objects until the new list is complete, never a half list.
    store = next;
    generation += 1;
    resourceVersion = version;
    options.activity?.(resource, 'listed');
    log.info({ [resource]: count, resourceVersion: version }, `${resource} listed`);
  }

  function apply(type: unknown, object: KubeObject): void {
    if (type === 'ERROR') {
      const { code, message } = object as { code?: unknown; message?: unknown };
      if (code === 410) throw new Expired(String(message ?? ''));
      throw new Error(`watch ${resource}: ERROR event ${String(code)}: ${String(message ?? '')}`);
    }
    const version = object.metadata?.resourceVersion;
    if (typeof version === 'string') resourceVersion = version;
    // An event came through: the watch works, and the next failure starts the backoff afresh.
    expiries = 0;
    failures = 0;
    options.activity?.(resource, 'event');
    if (type === 'BOOKMARK' || store === undefined) return;
    put(store, object, type === 'DELETED');
    generation += 1;
  }

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      stop.signal.addEventListener('abort', done, { once: true });
    });

  async function watch(): Promise<void> {
    const started = performance.now();
    const query = `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion ?? '')}&timeoutSeconds=${watchSeconds}`;
    const answer = await watchOnce({
      api,
      path: `${path}?${query}`,
      what: `watch ${resource}`,
      // The API server's timeoutSeconds, and some room for it to close the stream itself.
      idleMs: watchSeconds * 1000 + Math.min(30_000, watchSeconds * 1000),
      onEvent: apply,
      signal: stop.signal,
    });
    if (answer.status === 410) throw new Expired(statusLine(410, answer.text));
    if (answer.status !== 200) throw new Error(`watch ${resource} ${statusLine(answer.status, answer.text)}`);
    if (answer.events === 0 && performance.now() - started < AT_ONCE_MS) {
      throw new Error(`watch ${resource}: the watch ended at once, without an event`);
    }
    // It ran its course (the API server's timeoutSeconds): watch again from where it stopped.
    failures = 0;
    options.activity?.(resource, 'watch-ended');
  }

  void (async () => {
    while (!closed) {
      try {
        if (resourceVersion === undefined) await list();
        // Closed while the list was under way: the watch would start with its signal already aborted, unseen.
        if (closed) return;
        await watch();
      } catch (err) {
        if (closed) return;
        if (err instanceof Expired) {
          log.info(
            { reason: err.message, resourceVersion },
            `${kind} watch expired (410 Gone): listing again`,
          );
          resourceVersion = undefined;
          expiries += 1;
          if (expiries > 1) await pause(retryDelay(backoff, expiries - 1));
          continue;
        }
        failures += 1;
        why = err instanceof Error ? err.message : String(err);
        const retryInMs = retryDelay(backoff, failures);
        log.warn(
          { err: why, attempt: failures, retryInMs },
          store === undefined
            ? `${resource} not listed: ${options.unlisted}`
            : `${kind} watch failed: ${options.lagging}`,
        );
        await pause(retryInMs);
      }
    }
  })();

  return {
    store: () => store,
    notListed: () =>
      store === undefined ? `${resource} not listed yet${why === undefined ? '' : `: ${why}`}` : undefined,
    generation: () => generation,
    close() {
      closed = true;
      stop.abort();
    },
  };
}
