// One collection of the API server kept in memory, as client-go's reflector keeps it: a paged list, then a watch
// from the list's resourceVersion (bookmarks move it on); 410 Gone lists again; any other failure, and a watch that
// ends at once without an event, watches again after a backoff, one log line each. The backoff grows until a watch
// works (delivers an event, or runs until the API server ends it), so a watch that keeps failing is not retried
// every second. Only what `keep` takes of each object is stored: node objects are large, their kubelet version small.

import { BACKOFF, type Backoff, retryDelay } from '../kube/api/backoff.js';
import { inClusterClient, type KubeApi, serviceAccount } from '../kube/api/in-cluster.js';
import { eachItem } from '../kube/api/paged-list.js';
import type { Refusal } from '../kube/api/reply.js';
import { type KubeObject, watch } from '../kube/api/watch.js';
import type { Logger } from '../log.js';

export type { KubeObject } from '../kube/api/watch.js';

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
  /** Objects per list page: fewer for large objects (nodes), so a page stays well under the client's page bound. */
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
const WATCH_SECONDS = 300;
/** A watch ending sooner than this without an event is a failure (a proxy in the way), not its course run. */
const AT_ONCE_MS = 1000;

/** 410 Gone: the resourceVersion is older than the API server keeps; only a new list helps. */
class Expired extends Error {}

/** `answered 403: <the API server's message>`. */
const answered = (refusal: Refusal) => `answered ${refusal.status}: ${refusal.message}`;

const identity = (object: KubeObject): [string, string] | undefined => {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const namespace = object.metadata?.namespace;
  return [typeof namespace === 'string' ? namespace : '', name];
};

type MutableStore<T> = Map<string, Map<string, T>>;

/** `object` kept in `target` (or, deleted or kept as nothing, taken out of it). */
function put<T>(target: MutableStore<T>, object: KubeObject, kept: T | undefined): void {
  const id = identity(object);
  if (id === undefined) return;
  const [namespace, name] = id;
  const names = target.get(namespace);
  if (kept !== undefined) {
    if (names === undefined) target.set(namespace, new Map([[name, kept]]));
    else names.set(name, kept);
  } else if (names?.delete(name) && names.size === 0) {
    target.delete(namespace);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });

/** One collection's list and watch, and what they have kept. */
class Reflection<T> {
  store: MutableStore<T> | undefined;
  generation = 0;
  resourceVersion: string | undefined;
  /** The last failure, while never listed. */
  why: string | undefined;
  /** Failures since a watch last worked: the backoff and the `attempt` of the log line. */
  failures = 0;
  /** 410s in a row without an event between: a second one waits, so a confused API server is not hammered. */
  expiries = 0;
  readonly stop = new AbortController();

  constructor(private readonly options: ReflectorOptions<T>) {}

  get closed(): boolean {
    return this.stop.signal.aborted;
  }

  /** The whole collection, page by page, swapped in whole. */
  async list(): Promise<void> {
    const { api, path, resource, keep } = this.options;
    const next: MutableStore<T> = new Map();
    const keepItem = (item: KubeObject) => put(next, item, keep(item, String(item.metadata?.name)));
    // A continue token that expired lists again from the start at once: the pages kept so far are dropped.
    const listed = await eachItem(inClusterClient(api, LIST_TIMEOUT_MS), path, keepItem, {
      limit: this.options.pageSize ?? PAGE,
      restart: () => next.clear(),
    });
    if (!listed.ok) throw new Error(`list ${resource} ${answered(listed)}`);
    // Swapped whole: admissions see the old objects until the new list is complete, never a half list.
    this.store = next;
    this.generation += 1;
    this.resourceVersion = listed.resourceVersion;
    this.options.activity?.(resource, 'listed');
    this.options.log.info(
      { [resource]: listed.count, resourceVersion: listed.resourceVersion },
      `${resource} listed`,
    );
  }

  apply(type: unknown, object: KubeObject): void {
    if (type === 'ERROR') {
      const { code, message } = object as { code?: unknown; message?: unknown };
      if (code === 410) throw new Expired(String(message ?? ''));
      throw new Error(
        `watch ${this.options.resource}: ERROR event ${String(code)}: ${String(message ?? '')}`,
      );
    }
    const version = object.metadata?.resourceVersion;
    if (typeof version === 'string') this.resourceVersion = version;
    // An event came through: the watch works, and the next failure starts the backoff afresh.
    this.expiries = 0;
    this.failures = 0;
    this.options.activity?.(this.options.resource, 'event');
    if (type === 'BOOKMARK' || this.store === undefined) return;
    put(
      this.store,
      object,
      type === 'DELETED' ? undefined : this.options.keep(object, String(object.metadata?.name)),
    );
    this.generation += 1;
  }

  /** From resourceVersion until the API server ends the watch. */
  async watch(): Promise<void> {
    const { api, path, resource } = this.options;
    const watchSeconds = this.options.watchSeconds ?? WATCH_SECONDS;
    const started = performance.now();
    const query = `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(this.resourceVersion ?? '')}&timeoutSeconds=${watchSeconds}`;
    const ended = await watch({
      server: serviceAccount(api),
      path: `${path}?${query}`,
      what: `watch ${resource}`,
      // The API server's timeoutSeconds, and some room for it to close the stream itself.
      idleMs: watchSeconds * 1000 + Math.min(30_000, watchSeconds * 1000),
      onEvent: (type, object) => this.apply(type, object),
      signal: this.stop.signal,
    });
    if (!ended.ok && ended.status === 410) throw new Expired(answered(ended));
    if (!ended.ok) throw new Error(`watch ${resource} ${answered(ended)}`);
    if (ended.events === 0 && performance.now() - started < AT_ONCE_MS) {
      throw new Error(`watch ${resource}: the watch ended at once, without an event`);
    }
    // It ran its course (the API server's timeoutSeconds): watch again from where it stopped.
    this.failures = 0;
    this.options.activity?.(resource, 'watch-ended');
  }

  /** What a failed list or watch leads to: a new list at once (410), else a log line and a backoff. */
  async recover(err: unknown): Promise<void> {
    const { log, kind, resource } = this.options;
    const backoff = this.options.backoff ?? BACKOFF;
    if (err instanceof Expired) {
      log.info(
        { reason: err.message, resourceVersion: this.resourceVersion },
        `${kind} watch expired (410 Gone): listing again`,
      );
      this.resourceVersion = undefined;
      this.expiries += 1;
      if (this.expiries > 1) await pause(retryDelay(backoff, this.expiries - 1), this.stop.signal);
      return;
    }
    this.failures += 1;
    this.why = err instanceof Error ? err.message : String(err);
    const retryInMs = retryDelay(backoff, this.failures);
    log.warn(
      { err: this.why, attempt: this.failures, retryInMs },
      this.store === undefined
        ? `${resource} not listed: ${this.options.unlisted}`
        : `${kind} watch failed: ${this.options.lagging}`,
    );
    await pause(retryInMs, this.stop.signal);
  }

  /** List, then watch, again and again, until closed. */
  async run(): Promise<void> {
    while (!this.closed) {
      try {
        if (this.resourceVersion === undefined) await this.list();
        // Closed while the list was under way: the watch would start with its signal already aborted, unseen.
        if (this.closed) return;
        await this.watch();
      } catch (err) {
        if (this.closed) return;
        await this.recover(err);
      }
    }
  }
}

export function reflect<T>(options: ReflectorOptions<T>): Reflector<T> {
  const reflection = new Reflection(options);
  void reflection.run();
  return {
    store: () => reflection.store,
    notListed: () =>
      reflection.store === undefined
        ? `${options.resource} not listed yet${reflection.why === undefined ? '' : `: ${reflection.why}`}`
        : undefined,
    generation: () => reflection.generation,
    close: () => reflection.stop.abort(),
  };
}
