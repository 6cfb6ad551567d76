// Namespaces as the API server serves them to a list and watch (client-go's reflector): GET /api/v1/namespaces
// pages with limit/continue and the list's resourceVersion; ?watch=1 streams newline-delimited events from a
// resourceVersion (replaying what happened since), BOOKMARK events when asked, an ERROR event with a 410 Expired
// Status for a resourceVersion older than the kept history (then the stream ends), and the end of the stream at
// timeoutSeconds. Hooks relabel, create and delete namespaces, compact the history, and end open watches.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { status } from './kube-rbac.js';

type Json = Record<string, unknown>;

interface Event {
  version: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Json;
}

export interface NamespaceStore {
  /** Creates, relabels (labels) or deletes (undefined) a namespace, with a watch event as the API server sends. */
  put(name: string, labels: Record<string, string> | undefined): void;
  /** The labels of a namespace, or undefined when there is none. */
  labels(name: string): Record<string, string> | undefined;
  /** Forgets the event history: a watch from any earlier resourceVersion gets 410 Gone. */
  compact(): void;
  /** A BOOKMARK event on every open watch, at the current resourceVersion. */
  bookmark(): void;
  /** Ends every open watch, as the API server does at the watch's timeoutSeconds. */
  endWatches(): void;
  /** `list` per list page, `watch <resourceVersion>` per watch opened, in order. */
  requests: string[];
  /** How many watches are open now. */
  openWatches(): number;
  /** Serves GET /api/v1/namespaces (a list, or ?watch=1); false for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

export function namespaceStore(): NamespaceStore {
  let version = 1000;
  const objects = new Map<string, Json>();
  let history: Event[] = [];
  let compactedAt = 0;
  const watchers = new Set<{ res: ServerResponse; timer: NodeJS.Timeout }>();
  const requests: string[] = [];

  const send = (res: ServerResponse, event: Json) => res.write(`${JSON.stringify(event)}\n`);
  const end = (watcher: { res: ServerResponse; timer: NodeJS.Timeout }) => {
    clearTimeout(watcher.timer);
    watchers.delete(watcher);
    watcher.res.end();
  };

  function list(res: ServerResponse, url: URL): void {
    requests.push('list');
    const limit = Number(url.searchParams.get('limit') ?? '0') || Number.POSITIVE_INFINITY;
    const token = url.searchParams.get('continue');
    const [at = version, offset = 0] = token === null ? [] : token.split(':').map(Number);
    const items = [...objects.values()].sort((a, b) =>
      String((a.metadata as Json).name).localeCompare(String((b.metadata as Json).name)),
    );
    const page = items.slice(offset, offset + limit);
    const more = offset + page.length < items.length;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'NamespaceList',
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
    put(name, labels) {
      version += 1;
      const existing = objects.get(name);
      const object: Json = {
        kind: 'Namespace',
        apiVersion: 'v1',
        metadata: {
          name,
          uid: `ns-${name}`,
          resourceVersion: String(version),
          labels: { 'kubernetes.io/metadata.name': name, ...labels },
        },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      };
      const type = labels === undefined ? 'DELETED' : existing === undefined ? 'ADDED' : 'MODIFIED';
      if (labels === undefined) {
        if (existing === undefined) return;
        objects.delete(name);
      } else {
        objects.set(name, object);
      }
      const event = {
        version,
        type,
        object:
          labels === undefined
            ? { ...existing, metadata: { ...(existing?.metadata as Json), resourceVersion: String(version) } }
            : object,
      } as Event;
      history.push(event);
      for (const { res } of watchers) send(res, { type: event.type, object: event.object });
    },
    labels(name) {
      const object = objects.get(name);
      return object === undefined ? undefined : ((object.metadata as Json).labels as Record<string, string>);
    },
    compact() {
      // As etcd compaction past every watcher: the current version moves on, and nothing before it is kept.
      version += 1;
      history = [];
      compactedAt = version;
    },
    bookmark() {
      for (const { res } of watchers) {
        send(res, {
          type: 'BOOKMARK',
          object: { kind: 'Namespace', apiVersion: 'v1', metadata: { resourceVersion: String(version) } },
        });
      }
    },
    endWatches() {
      for (const watcher of [...watchers]) end(watcher);
    },
    requests,
    openWatches: () => watchers.size,
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'https://x');
      if (url.pathname !== '/api/v1/namespaces') return false;
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
