// One collection as the API server serves it to a list and watch (client-go's reflector), across namespaces:
// GET <path> pages with limit/continue and the list's resourceVersion; ?watch=1 streams newline-delimited events
// from a resourceVersion (replaying what happened since), BOOKMARK events when asked, an ERROR event with a 410
// Expired Status for a resourceVersion older than the kept history (then the stream ends), and the end of the
// stream at timeoutSeconds. Hooks create, replace and delete objects, compact the history, end open watches, and
// make every new watch end at once, empty (a proxy in the way). Namespaces, LimitRanges, ResourceQuotas and nodes
// are each one of these (kube-namespaces.ts, kube-objects.ts); one resourceVersion counter is shared, as etcd's.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { status } from './kube-rbac.js';

type Json = Record<string, unknown>;

interface Event {
  version: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Json;
}

export interface Collection {
  /** `/api/v1/limitranges` */
  path: string;
  /** Creates or replaces (by namespace and name) an object, with the watch event the API server sends. */
  put(object: Json): void;
  /** Deletes an object, with its DELETED event; nothing when there is none. */
  remove(name: string, namespace?: string): void;
  get(name: string, namespace?: string): Json | undefined;
  /** Forgets the event history: a watch from any earlier resourceVersion gets 410 Gone. */
  compact(): void;
  /** A BOOKMARK event on every open watch, at the current resourceVersion. */
  bookmark(): void;
  /** Ends every open watch, as the API server does at the watch's timeoutSeconds. */
  endWatches(): void;
  /** true: every watch from now on is answered 200 and ended at once, without an event. */
  emptyWatches(on: boolean): void;
  /** `list` per list page, `watch <resourceVersion>` per watch opened, in order. */
  requests: string[];
  /** How many watches are open now. */
  openWatches(): number;
  /** Serves GET <path> (a list, or ?watch=1); false for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

/** etcd's revision: one counter for every collection of a stand-in. */
export interface Revision {
  value: number;
}

export function collection(path: string, kind: string, revision: Revision = { value: 1000 }): Collection {
  const objects = new Map<string, Json>();
  let history: Event[] = [];
  let compactedAt = 0;
  let empty = false;
  const watchers = new Set<{ res: ServerResponse; timer: NodeJS.Timeout }>();
  const requests: string[] = [];
  const keyOf = (name: string, namespace?: string) => `${namespace ?? ''}/${name}`;

  const send = (res: ServerResponse, event: Json) => res.write(`${JSON.stringify(event)}\n`);
  const end = (watcher: { res: ServerResponse; timer: NodeJS.Timeout }) => {
    clearTimeout(watcher.timer);
    watchers.delete(watcher);
    watcher.res.end();
  };
  const record = (type: Event['type'], object: Json) => {
    history.push({ version: revision.value, type, object });
    for (const { res } of watchers) send(res, { type, object });
  };

  function list(res: ServerResponse, url: URL): void {
    requests.push('list');
    const limit = Number(url.searchParams.get('limit') ?? '0') || Number.POSITIVE_INFINITY;
    const token = url.searchParams.get('continue');
    const [at = revision.value, offset = 0] = token === null ? [] : token.split(':').map(Number);
    const items = [...objects.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, object]) => object);
    const page = items.slice(offset, offset + limit);
    const more = offset + page.length < items.length;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: `${kind}List`,
        apiVersion: 'v1',
        metadata: {
          resourceVersion: String(at),
          ...(more ? { continue: `${at}:${offset + page.length}` } : {}),
        },
        items: page,
      }),
    );
  }

  function watch(res: ServerResponse, url: URL): void {
    const from = Number(url.searchParams.get('resourceVersion') ?? '0');
    requests.push(`watch ${url.searchParams.get('resourceVersion') ?? ''}`);
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if (empty) return void res.end();
    if (from < compactedAt) {
      send(res, {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${from} (${compactedAt})`,
          reason: 'Expired',
          code: 410,
        },
      });
      res.end();
      return;
    }
    for (const event of history)
      if (event.version > from) send(res, { type: event.type, object: event.object });
    const seconds = Number(url.searchParams.get('timeoutSeconds') ?? '1800');
    const watcher = { res, timer: setTimeout(() => end(watcher), seconds * 1000) };
    watchers.add(watcher);
    res.on('close', () => {
      clearTimeout(watcher.timer);
      watchers.delete(watcher);
    });
  }

  return {
    path,
    put(object) {
      revision.value += 1;
      const metadata = object.metadata as Json;
      const key = keyOf(String(metadata.name), metadata.namespace as string | undefined);
      const existing = objects.get(key);
      const stored: Json = {
        kind,
        apiVersion: 'v1',
        ...object,
        metadata: {
          ...metadata,
          uid: (existing?.metadata as Json | undefined)?.uid ?? `uid-${revision.value}`,
          resourceVersion: String(revision.value),
        },
      };
      objects.set(key, stored);
      record(existing === undefined ? 'ADDED' : 'MODIFIED', stored);
    },
    remove(name, namespace) {
      const existing = objects.get(keyOf(name, namespace));
      if (existing === undefined) return;
      revision.value += 1;
      objects.delete(keyOf(name, namespace));
      record('DELETED', {
        ...existing,
        metadata: { ...(existing.metadata as Json), resourceVersion: String(revision.value) },
      });
    },
    get: (name, namespace) => objects.get(keyOf(name, namespace)),
    compact() {
      // As etcd compaction past every watcher: the current version moves on, and nothing before it is kept.
      revision.value += 1;
      history = [];
      compactedAt = revision.value;
    },
    bookmark() {
      for (const { res } of watchers) {
        send(res, {
          type: 'BOOKMARK',
          object: { kind, apiVersion: 'v1', metadata: { resourceVersion: String(revision.value) } },
        });
      }
    },
    endWatches() {
      for (const watcher of [...watchers]) end(watcher);
    },
    emptyWatches(on) {
      empty = on;
    },
    requests,
    openWatches: () => watchers.size,
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'https://x');
      if (url.pathname !== path) return false;
      if (req.method !== 'GET') {
        status(res, 405, 'MethodNotAllowed', `${req.method} is not served here`);
        return true;
      }
      if (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true') watch(res, url);
      else list(res, url);
      return true;
    },
  };
}
