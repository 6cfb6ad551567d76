// The DER encoders against byte strings from X.690's rules (and what openssl writes for the same values).

import { describe, expect, it } from 'vitest';
import * as der from '../../../src/webhook/tls/der.js';

const hex = (b: Buffer) => b.toString('hex');

describe('der', () => {
  it.each([
    { name: 'a small integer', value: der.smallInteger(2), expected: '020102' },
    {
      name: 'an integer with its sign bit set gets a 0x00',
      value: der.unsignedInteger(Buffer.from([0x80, 1])),
      expected: '0203008001',
    },
    {
      name: 'leading zeros are stripped',
      value: der.unsignedInteger(Buffer.from([0, 0, 0x7f])),
      expected: '02017f',
    },
    { name: 'zero', value: der.unsignedInteger(Buffer.from([0, 0])), expected: '020100' },
    {
      name: 'an OID (ecdsa-with-SHA256)',
      value: der.oid('1.2.840.10045.4.3.2'),
      expected: '06082a8648ce3d040302',
    },
    { name: 'an OID (subjectAltName)', value: der.oid('2.5.29.17'), expected: '0603551d11' },
    { name: 'TRUE', value: der.boolean(true), expected: '0101ff' },
    {
      name: 'a BIT STRING with unused bits',
      value: der.bitString(Buffer.from([0x86]), 1),
      expected: '03020186',
    },
    { name: 'a dNSName', value: der.implicitPrimitive(2, Buffer.from('a.b')), expected: '8203612e62' },
    {
      name: 'UTCTime through 2049',
      value: der.time(new Date('2049-12-31T23:59:59.999Z')),
      expected: hex(Buffer.concat([Buffer.from([0x17, 13]), Buffer.from('491231235959Z')])),
    },
    {
      name: 'GeneralizedTime from 2050',
      value: der.time(new Date('2050-01-01T00:00:00Z')),
      expected: hex(Buffer.concat([Buffer.from([0x18, 15]), Buffer.from('20500101000000Z')])),
    },
  ])('$name', ({ value, expected }) => {
    expect(hex(value)).toBe(expected);
  });

  it.each([
    { name: 'short form up to 127', length: 127, header: '307f' },
    { name: 'one length byte from 128', length: 128, header: '308180' },
    { name: 'two length bytes from 256', length: 300, header: '3082012c' },
  ])('lengths: $name', ({ length, header }) => {
    const encoded = der.sequence(Buffer.alloc(length));
    expect(hex(encoded.subarray(0, header.length / 2))).toBe(header);
    expect(encoded.length).toBe(header.length / 2 + length);
  });
});
