// Which callers a sealed companion answers: the seal source of either family (also as a dual-stack socket shows
// an IPv4 caller) and loopback; nobody else, and never an address the socket could not tell.

import { describe, expect, it } from 'vitest';
import { sealedAdmits } from '../../src/server/sealed-callers.js';

describe('sealedAdmits', () => {
  it.each([
    '169.254.7.127',
    '::ffff:169.254.7.127',
    'fd16:9254:7127:1337:ffff:ffff:ffff:ffff',
    'FD16:9254:7127:1337:FFFF:FFFF:FFFF:FFFF',
    '127.0.0.1',
    '127.1.2.3',
    '::ffff:127.0.0.1',
    '::1',
  ])('answers %s', (address) => {
    expect(sealedAdmits(address)).toBe(true);
  });

  it.each([
    undefined,
    '',
    '10.88.0.1',
    '::ffff:10.88.0.5',
    '169.254.7.128',
    '169.254.7.12',
    'fd16:9254:7127:1337:ffff:ffff:ffff:fffe',
    '::',
    '0.0.0.0',
    '::ffff:7f00:1',
    '128.0.0.1',
    '127.0.0.1.evil',
  ])('closes %s', (address) => {
    expect(sealedAdmits(address)).toBe(false);
  });
});
