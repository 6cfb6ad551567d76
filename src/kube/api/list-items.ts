// A list answer (`{"kind":"PodList","metadata":{...},"items":[...]}`) split into the bytes of each item without
// parsing it whole: one JSON.parse of a page makes one string as long as the page, which V8 keeps in its
// large-object space until a full collection, so the pages of a big cluster pile up there; an item at a time makes
// small strings and objects that die young. Pure: bytes in, offsets out.

/** Where each item of the top-level `items` array lies, and the answer without them (for its metadata). */
export interface SplitList {
  /** [start, end) byte offsets of each item. */
  items: [number, number][];
  /** [start, end) of the array's inside: the answer with it cut out is small and parses alone. */
  inside: [number, number];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ITEMS = Buffer.from('"items"');

const isSpace = (byte: number | undefined) =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** The offset just past the string that starts at `start` (a quote). */
function stringEnd(bytes: Uint8Array, start: number): number {
  let i = start + 1;
  while (i < bytes.length) {
    const byte = bytes[i];
    if (byte === BACKSLASH) i += 2;
    else if (byte === QUOTE) return i + 1;
    else i++;
  }
  return -1;
}

/**
 * The items of the top-level `items` array of the JSON object in `bytes`, or undefined when there is none (the
 * answer is parsed whole then) or the bytes end inside it. Only the structure is read: each item is for JSON.parse.
 */
export function splitList(bytes: Uint8Array): SplitList | undefined {
  let depth = 0;
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      const end = stringEnd(bytes, i);
      if (end < 0) return undefined;
      if (depth === 1 && end - i === ITEMS.length && ITEMS.equals(bytes.subarray(i, end))) {
        let j = end;
        while (isSpace(bytes[j])) j++;
        if (bytes[j] === COLON) {
          j++;
          while (isSpace(bytes[j])) j++;
          return bytes[j] === OPEN_BRACKET ? arrayItems(bytes, j) : undefined;
        }
      }
      i = end;
    } else {
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
      i++;
    }
  }
  return undefined;
}

/** The elements of the array that opens at `open`. */
function arrayItems(bytes: Uint8Array, open: number): SplitList | undefined {
  const items: [number, number][] = [];
  let depth = 0;
  let start = -1;
  let i = open + 1;
  while (i < bytes.length) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      if (start < 0) start = i;
      i = stringEnd(bytes, i);
      if (i < 0) return undefined;
      continue;
    }
    if (depth === 0 && (byte === COMMA || byte === CLOSE_BRACKET)) {
      if (start >= 0) {
        let end = i;
        while (isSpace(bytes[end - 1])) end--;
        items.push([start, end]);
      }
      start = -1;
      if (byte === CLOSE_BRACKET) return { items, inside: [open + 1, i] };
    } else if (!isSpace(byte)) {
      if (start < 0) start = i;
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
    }
    i++;
  }
  return undefined;
}
