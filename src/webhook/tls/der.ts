// A minimal DER (ITU-T X.690) writer: exactly the ASN.1 types an X.509 certificate needs, and a reader of a
// constructed value's elements, so a name can be copied as its certificate holds it. node:crypto makes and uses keys
// but cannot sign a certificate; these few encoders let x509.ts do it.

/** One encoded TLV: tag, definite length, contents. */
function tlv(tag: number, contents: Buffer): Buffer {
  const n = contents.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, contents]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
export const boolean = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
/** [n] EXPLICIT: a constructed context-specific wrapper around one encoded value. */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
/** [n] IMPLICIT of a primitive type: the bytes with a context-specific tag (e.g. dNSName is [2] IA5String). */
export const implicitPrimitive = (n: number, bytes: Buffer): Buffer => tlv(0x80 | n, bytes);

/** A non-negative INTEGER from its big-endian magnitude: leading zeros stripped, a 0x00 added when the sign bit is set. */
export function unsignedInteger(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start += 1;
  const bytes = magnitude.subarray(start);
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : Buffer.from(bytes));
}

export const smallInteger = (value: number): Buffer => unsignedInteger(Buffer.from([value]));

/** BIT STRING with `unusedBits` trailing bits of the last byte unused (DER: those must be zero). */
export const bitString = (bytes: Buffer, unusedBits = 0): Buffer =>
  tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]));

/** OBJECT IDENTIFIER from dotted text, e.g. "2.5.29.17". */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; always UTC, seconds, no fraction. */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  return year < 2050
    ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(digits, 'ascii'));
}

/**
 * The elements of the constructed DER value at the start of `encoded`, each as its whole TLV, byte for byte.
 * Throws on a truncated or indefinite-length encoding (DER has none): the input is a certificate we hold.
 */
export function elements(encoded: Buffer): Buffer[] {
  const outer = header(encoded, 0);
  const found: Buffer[] = [];
  for (let at = outer.contentStart; at < outer.end; ) {
    const inner = header(encoded, at);
    if (inner.end > outer.end) throw new Error(`DER: an element at byte ${at} runs past its parent`);
    found.push(encoded.subarray(at, inner.end));
    at = inner.end;
  }
  return found;
}

/** Where the TLV at `at` keeps its contents, and where it ends. */
function header(encoded: Buffer, at: number): { contentStart: number; end: number } {
  const first = encoded[at + 1];
  if (encoded[at] === undefined || first === undefined) throw new Error(`DER: no value at byte ${at}`);
  if (first < 0x80) return { contentStart: at + 2, end: at + 2 + first };
  const count = first & 0x7f;
  if (count === 0 || count > 4) throw new Error(`DER: a length of ${count} bytes at byte ${at}`);
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + (encoded[at + 2 + i] ?? 0);
  const contentStart = at + 2 + count;
  if (contentStart + length > encoded.length) throw new Error(`DER: the value at byte ${at} is truncated`);
  return { contentStart, end: contentStart + length };
}
