// The answer to a probe whose verdict is kubelet's Warning (a 3xx kubelet would not follow): the app's status and
// the app's body as kubelet would have read it, so kubelet's Warning, its ProbeWarning event and `kubectl
// describe` read exactly as without the mesh (docs/architecture.md#what-kubelet-receives). Location is never passed on: kubelet would follow it
// from the companion's address by its own rules. Our reason line goes into a header instead of the body.

import type { FastifyReply } from 'fastify';
import type { AppBody } from '../probe/result.js';
import { REASON_HEADER } from '../scheme.js';

/** Long enough for any line the probers write about a real app; a Location of megabytes is cut. */
export const MAX_REASON_CHARS = 1024;
const MAX_CONTENT_TYPE_CHARS = 256;
const CUT = '...';

/**
 * One header-safe line: printable ASCII only (anything else, CR and LF among it, written as `\u{…}`), at most
 * MAX_REASON_CHARS, a cut marked with `...`. Node refuses a header value with CR, LF or a character past U+00FF.
 */
export function reasonHeaderValue(line: string): string {
  const printable = line.replaceAll(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)?.toString(16)}}`);
  return printable.length <= MAX_REASON_CHARS
    ? printable
    : `${printable.slice(0, MAX_REASON_CHARS - CUT.length)}${CUT}`;
}

/** The app's Content-Type when it is one plain printable value; else none (Fastify then says octet-stream). */
function contentType(value: string | undefined): string | undefined {
  if (value === undefined || value.length > MAX_CONTENT_TYPE_CHARS) return undefined;
  return /^[\x20-\x7e]+$/.test(value) ? value : undefined;
}

export function sendRelayed(reply: FastifyReply, status: number, body: AppBody, line: string): FastifyReply {
  reply.code(status).header(REASON_HEADER, reasonHeaderValue(line));
  const type = contentType(body.contentType);
  if (type !== undefined) reply.header('content-type', type);
  return reply.send(body.bytes);
}
