// A list read page by page (`limit` and `continue`, as kubectl and client-go's pager read it), each page handed on
// and dropped before the next is asked for, so memory holds one page, whatever the cluster's size.

import type { ApiReply, ClusterClient, Json } from './kube-client.js';

/** The API server's page size for lists: kubectl's default chunk size. */
export const PAGE_SIZE = 500;

export type ListOutcome = { ok: true; count: number } | { ok: false; status: number; message: string };

/** Every item of `path` (a collection, with or without a query), page by page, to `each`. */
export async function eachItem(
  client: ClusterClient,
  path: string,
  each: (item: Json) => void,
  limit = PAGE_SIZE,
): Promise<ListOutcome> {
  let token: string | undefined;
  let count = 0;
  do {
    const url = new URL(path, 'https://list.invalid');
    url.searchParams.set('limit', String(limit));
    if (token !== undefined) url.searchParams.set('continue', token);
    const reply: ApiReply = await client.get(`${url.pathname}${url.search}`);
    if (!reply.ok) return { ok: false, status: reply.status, message: reply.message };
    const items = reply.body.items;
    if (Array.isArray(items)) {
      for (const item of items) {
        if (typeof item === 'object' && item !== null) each(item as Json);
      }
      count += items.length;
    }
    const next = (reply.body.metadata as { continue?: unknown } | undefined)?.continue;
    token = typeof next === 'string' && next !== '' ? next : undefined;
  } while (token !== undefined);
  return { ok: true, count };
}
