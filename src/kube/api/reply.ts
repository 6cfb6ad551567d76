// What the API server answered, read once for every caller: an object (with its admission warnings), a page of a
// list, or a refusal (the Status it sent: its reason and message). Pure: status and bytes in, a value out.

import { briefMessage } from '../../errors.js';
import { isObject, type Json } from '../../json.js';
import { splitList } from './list-items.js';

/** A refusal: the HTTP status, the Status's reason (`Forbidden`; else `HTTP 403`) and message. */
export interface Refusal {
  ok: false;
  status: number;
  reason: string;
  message: string;
}

/** An object the API server sent, or its refusal. */
export type Reply<T = Json> = { ok: true; body: T; warnings: string[] } | Refusal;

/**
 * One page of a list: its items, each parsed only when the iteration reaches it (list-items.ts), the list's
 * resourceVersion and the token of the next page; or the refusal. An item that is no JSON throws a SyntaxError
 * from the iteration.
 */
export type ListPage =
  | { ok: true; items: () => Iterable<Json>; resourceVersion: string; continue: string | undefined }
  | Refusal;

const parsed = (text: string): Json | undefined => {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
};

/** The refusal in an answer of `status`: the Status's reason and message, else the start of the body. */
export function refusalOf(status: number, text: string, object = parsed(text)): Refusal {
  return {
    ok: false,
    status,
    reason: typeof object?.reason === 'string' ? object.reason : `HTTP ${status}`,
    message:
      typeof object?.message === 'string'
        ? object.message
        : briefMessage(text === '' ? `HTTP ${status}` : text, 200),
  };
}

/** The object of a 2xx answer, or the refusal. */
export function replyOf(status: number, body: string | Buffer, warnings: string[] = []): Reply {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const object = parsed(text);
  if (status >= 200 && status < 300 && object !== undefined) return { ok: true, body: object, warnings };
  return refusalOf(status, text, object);
}

/** The warn-text of each `299 - "text"` the API server sent (admission webhooks' warnings among them). */
export function warningsOf(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(', ') : header;
  return [...text.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) =>
    (m[1] ?? '').replaceAll(/\\(.)/g, '$1'),
  );
}

/** A page of a list from a 2xx answer, item by item where its items can be found in the bytes, else parsed whole. */
export function pageOf(status: number, bytes: Buffer): ListPage {
  const split = status >= 200 && status < 300 ? splitList(bytes) : undefined;
  const rest =
    split === undefined
      ? undefined
      : parsed(`${bytes.toString('utf8', 0, split.inside[0])}${bytes.toString('utf8', split.inside[1])}`);
  if (split === undefined || rest === undefined) {
    const reply = replyOf(status, bytes);
    if (!reply.ok) return reply;
    const items = Array.isArray(reply.body.items) ? reply.body.items.filter(isObject) : [];
    return { ok: true, items: () => items, ...positionOf(reply.body) };
  }
  return {
    ok: true,
    items: function* () {
      for (const [start, end] of split.items) {
        const item: unknown = JSON.parse(bytes.toString('utf8', start, end));
        if (isObject(item)) yield item;
      }
    },
    ...positionOf(rest),
  };
}

/** metadata.resourceVersion of a list, and metadata.continue when there is a next page. */
function positionOf(list: Json): { resourceVersion: string; continue: string | undefined } {
  const metadata = isObject(list.metadata) ? list.metadata : {};
  const next = metadata.continue;
  return {
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    continue: typeof next === 'string' && next !== '' ? next : undefined,
  };
}
