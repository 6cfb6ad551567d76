// The node's pod networks as the agent's script writes them: each CIDR parsed, its host bits refused, and
// printed in iptables-save's own form (IPv6 compressed), so `--ensure` compares like with like. Pure.

import { isIPv4, isIPv6 } from 'node:net';
import { usageError } from '../flags.js';

export interface Cidr {
  family: 4 | 6;
  /** As iptables-save prints it: `10.88.0.0/16`, `fd00:88::/64`. */
  text: string;
}

const ACCEPTED = 'networks like 10.88.0.0/16 or fd00:88::/64, comma-separated, without host bits';

/** The address as 32 or 128 bits. */
function bits(address: string, family: 4 | 6): bigint {
  if (family === 4) return address.split('.').reduce((n, octet) => (n << 8n) | BigInt(octet), 0n);
  const [head = '', tail] = address.split('::');
  const groups = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = groups(tail);
  const all =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((n, group) => (n << 16n) | BigInt(`0x${group}`), 0n);
}

/** IPv6 in its canonical text (RFC 5952), as the URL parser writes a host. */
function canonicalIPv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

export function parseCidr(item: string, flag: string): Cidr {
  const [address = '', length, extra] = item.split('/');
  const family = isIPv4(address) ? 4 : isIPv6(address) && !address.includes('.') ? 6 : undefined;
  const max = family === 4 ? 32 : 128;
  if (family === undefined || length === undefined || extra !== undefined || !/^\d{1,3}$/.test(length)) {
    throw usageError(`${flag} "${item}" is not a network`, ACCEPTED);
  }
  const prefix = Number(length);
  if (prefix > max) throw usageError(`${flag} "${item}": the prefix is longer than ${max}`, ACCEPTED);
  const hostBits = bits(address, family) & ((1n << BigInt(max - prefix)) - 1n);
  if (hostBits !== 0n) {
    throw usageError(`${flag} "${item}" has host bits set`, ACCEPTED);
  }
  return { family, text: `${family === 4 ? address : canonicalIPv6(address)}/${prefix}` };
}

/** `10.88.0.0/16,fd00:88::/64`: at least one, no duplicates. */
export function parseCidrs(text: string, flag = '--pod-cidr'): Cidr[] {
  const items = text.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw usageError(`${flag} "${text}" has an empty item`, ACCEPTED);
  const cidrs = items.map((item) => parseCidr(item, flag));
  const texts = cidrs.map((cidr) => cidr.text);
  const twice = texts.find((cidr, i) => texts.indexOf(cidr) !== i);
  if (twice !== undefined) throw usageError(`${flag} names ${twice} twice`, ACCEPTED);
  return cidrs;
}
