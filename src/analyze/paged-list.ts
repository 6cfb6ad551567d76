// analyze's lists: src/kube/api's paged list, with a full collection between pages when the command bounds the
// heap (heap.ts), so each page's items are gone before the next page's bytes arrive.

import { eachItem as eachOf, type ListOptions, type ListOutcome } from '../kube/api/paged-list.js';
import { collectGarbage } from './heap.js';
import type { ClusterClient, Json } from './kube-client.js';

export type { ListOutcome };

/** Every item of `path` (a collection, with or without a query), page by page, to `each`. */
export function eachItem(
  client: ClusterClient,
  path: string,
  each: (item: Json) => void,
  options: Pick<ListOptions, 'limit' | 'metadataOnly'> = {},
): Promise<ListOutcome> {
  return eachOf(client, path, each, { ...options, betweenPages: collectGarbage });
}
