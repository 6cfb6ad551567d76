// A list read page by page (`limit` and `continue`, as kubectl and client-go's pager read it), each page handed on
// and dropped before the next is asked for, so memory holds one page, whatever the cluster's size; each item is
// parsed only when it is handed on (list-items.ts), so a page's objects die young.

import type { Json } from '../../json.js';
import type { ApiClient } from './client.js';
import type { Refusal } from './reply.js';

/** The API server's page size for lists: kubectl's default chunk size. */
export const PAGE_SIZE = 500;

export type ListOutcome = { ok: true; count: number; resourceVersion: string } | Refusal;

export interface ListOptions {
  /** Items per page. */
  limit?: number;
  /** Only each item's metadata is read: the API server sends no more (client.ts). */
  metadataOnly?: boolean;
  /** After each page is handed on, before the next is asked for: the page is garbage by then (analyze's heap.ts). */
  betweenPages?: () => void;
  /**
   * The list's continue token expired (410 on a later page) and it is read again from its first page, at once:
   * what was kept of the pages before is to be dropped. Without it the new list resumes after the last item
   * handed on (a list comes in key order, as its continue token does), for a reader that only takes a snapshot.
   */
  restart?: () => void;
}

/**
 * How often a list whose continue token expired is read again before its 410 is the answer: an expiry needs the
 * API server's history compacted past the list while it is read, which a sound cluster does every 5 minutes.
 */
export const RELISTS = 3;

/** `namespace/name`: where an item lies in the API server's key order. */
const keyOf = (item: Json): string => {
  const metadata = (item.metadata ?? {}) as { namespace?: unknown; name?: unknown };
  return `${typeof metadata.namespace === 'string' ? metadata.namespace : ''}/${String(metadata.name ?? '')}`;
};

function pagePath(path: string, limit: number, token: string | undefined): string {
  const url = new URL(path, 'https://list.invalid');
  url.searchParams.set('limit', String(limit));
  if (token !== undefined) url.searchParams.set('continue', token);
  return `${url.pathname}${url.search}`;
}

/** Every item of `path` (a collection, with or without a query), page by page, to `each`. */
export async function eachItem(
  client: Pick<ApiClient, 'list'>,
  path: string,
  each: (item: Json) => void,
  { limit = PAGE_SIZE, metadataOnly = false, betweenPages, restart }: ListOptions = {},
): Promise<ListOutcome> {
  let token: string | undefined;
  let count = 0;
  /** The last item handed on, while a list that lost its place resumes after it. */
  let last: string | undefined;
  let skipUntil: string | undefined;
  let relists = 0;
  for (;;) {
    const page = await client.list(pagePath(path, limit, token), metadataOnly);
    if (!page.ok && page.status === 410 && token !== undefined) {
      if (relists === RELISTS) {
        return { ...page, message: `${page.message} (listed again ${RELISTS} times, expired each time)` };
      }
      relists++;
      token = undefined;
      if (restart === undefined) skipUntil = last;
      else {
        restart();
        count = 0;
      }
      continue;
    }
    if (!page.ok) return page;
    try {
      for (const item of page.items()) {
        if (skipUntil !== undefined) {
          if (keyOf(item) <= skipUntil) continue;
          skipUntil = undefined;
        }
        each(item);
        count++;
        if (restart === undefined) last = keyOf(item);
      }
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      const message = `an item of ${new URL(path, 'https://list.invalid').pathname} is no JSON: ${err.message}`;
      return { ok: false, status: 200, reason: 'Invalid', message };
    }
    token = page.continue;
    betweenPages?.();
    if (token === undefined) return { ok: true, count, resourceVersion: page.resourceVersion };
  }
}
