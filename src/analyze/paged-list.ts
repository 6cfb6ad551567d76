// A list read page by page (`limit` and `continue`, as kubectl and client-go's pager read it), each page handed on
// and dropped before the next is asked for, so memory holds one page, whatever the cluster's size; each item is
// parsed only when it is handed on (list-items.ts), so a page's objects die young; and they are collected before
// the next page is asked for when the command bounds the heap (heap.ts).

import { collectGarbage } from './heap.js';
import type { ClusterClient, Json, ListReply } from './kube-client.js';

/** The API server's page size for lists: kubectl's default chunk size. */
export const PAGE_SIZE = 500;

export type ListOutcome = { ok: true; count: number } | { ok: false; status: number; message: string };

export interface ListOptions {
  /** Items per page. */
  limit?: number;
  /** Only each item's metadata is read: the API server sends no more (kube-client.ts). */
  metadataOnly?: boolean;
}

/** Every item of `path` (a collection, with or without a query), page by page, to `each`. */
export async function eachItem(
  client: ClusterClient,
  path: string,
  each: (item: Json) => void,
  { limit = PAGE_SIZE, metadataOnly = false }: ListOptions = {},
): Promise<ListOutcome> {
  let token: string | undefined;
  let count = 0;
  do {
    const url = new URL(path, 'https://list.invalid');
    url.searchParams.set('limit', String(limit));
    if (token !== undefined) url.searchParams.set('continue', token);
    const reply: ListReply = await client.list(`${url.pathname}${url.search}`, metadataOnly);
    if (!reply.ok) return { ok: false, status: reply.status, message: reply.message };
    try {
      for (const item of reply.items()) {
        each(item);
        count++;
      }
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      return { ok: false, status: 200, message: `an item of ${url.pathname} is no JSON: ${err.message}` };
    }
    token = reply.continue;
    collectGarbage();
  } while (token !== undefined);
  return { ok: true, count };
}
