// The seal's decisions as tables: init's verdict from what it saw of the agent's proof connection, the line it
// says it in, the seal file's round trip (anything unreadable is open), and the proof's words.

import { describe, expect, it } from 'vitest';
import { nonceOfTarget, parseSeenLine, seenLine } from '../../src/seal/proof-wire.js';
import { formatSealRecord, parseSealRecord } from '../../src/seal/record.js';
import { SEAL_SOURCES } from '../../src/seal/sources.js';
import { describeVerdict, type ProofObservation, sealVerdict } from '../../src/seal/verdict.js';

describe('sealVerdict', () => {
  it.each<{ name: string; seen: ProofObservation; sealed: boolean; why?: string }>([
    {
      name: 'IPv4 seal source',
      seen: { arrived: true, from: SEAL_SOURCES.v4, nonceMatched: true },
      sealed: true,
    },
    {
      name: 'IPv4 seal source on a dual-stack socket',
      seen: { arrived: true, from: `::ffff:${SEAL_SOURCES.v4}`, nonceMatched: true },
      sealed: true,
    },
    {
      name: 'IPv6 seal source',
      seen: { arrived: true, from: SEAL_SOURCES.v6, nonceMatched: true },
      sealed: true,
    },
    {
      name: "the node's own address: a CNI that skips the host's iptables",
      seen: { arrived: true, from: '::ffff:10.88.0.1', nonceMatched: true },
      sealed: false,
      why: `the node agent's connection arrived from 10.88.0.1, not from ${SEAL_SOURCES.v4} or ${SEAL_SOURCES.v6}: this node's host-to-pod traffic bypasses the agent's SNAT (a CNI that skips the host's iptables?)`,
    },
    {
      name: 'the seal source without the nonce (not the agent we asked)',
      seen: { arrived: true, from: SEAL_SOURCES.v4, nonceMatched: false },
      sealed: false,
      why: `a connection from ${SEAL_SOURCES.v4} arrived without this run's nonce`,
    },
    {
      name: 'no agent',
      seen: {
        arrived: false,
        agentAnswer: 'no answer from the agent at 10.88.0.1:15910: connect ECONNREFUSED',
      },
      sealed: false,
      why: 'no proof connection from the node agent: no answer from the agent at 10.88.0.1:15910: connect ECONNREFUSED',
    },
  ])('$name', ({ seen, sealed, why }) => {
    const verdict = sealVerdict(seen);
    expect(verdict.sealed).toBe(sealed);
    if (!verdict.sealed) expect(verdict.why).toBe(why);
  });

  it('says the verdict in one line, either way', () => {
    expect(describeVerdict({ sealed: true, source: SEAL_SOURCES.v4 })).toBe(
      `sealed: 15901-15904 bypass the mesh only from ${SEAL_SOURCES.v4} and ${SEAL_SOURCES.v6}, the node agent's source (its proof connection came from ${SEAL_SOURCES.v4})`,
    );
    expect(describeVerdict({ sealed: false, why: 'no agent' })).toBe(
      'open: 15901-15904 bypass the mesh from every source, as without the node agent, because no agent',
    );
  });
});

describe('the seal file', () => {
  it.each([
    { sealed: true as const, source: SEAL_SOURCES.v4 },
    { sealed: false as const, why: 'no agent' },
  ])('round-trips %o', (verdict) => {
    expect(parseSealRecord(formatSealRecord(verdict))).toEqual(verdict);
  });

  it.each([
    { text: '', why: 'the seal file is not JSON' },
    { text: 'sealed', why: 'the seal file is not JSON' },
    { text: '[true]', why: 'the seal file is not a JSON object' },
    { text: '{"sealed":"true","source":"169.254.7.127"}', why: 'the seal file says open' },
    { text: '{"sealed":true}', why: 'the seal file says open' },
  ])('reads $text as open: $why', ({ text, why }) => {
    expect(parseSealRecord(text)).toEqual({ sealed: false, why });
  });
});

describe("the proof's words", () => {
  const nonce = '0123456789abcdef0123456789abcdef';
  it.each([
    { target: `/prove?nonce=${nonce}`, want: { nonce } },
    { target: '/prove', want: { refused: 'nonce must be 32 lowercase hex digits' } },
    {
      target: `/prove?nonce=${nonce.toUpperCase()}`,
      want: { refused: 'nonce must be 32 lowercase hex digits' },
    },
    { target: `/prove?nonce=${nonce}0`, want: { refused: 'nonce must be 32 lowercase hex digits' } },
    { target: `/other?nonce=${nonce}`, want: { refused: 'unknown path /other; the one path is /prove' } },
  ])('$target', ({ target, want }) => {
    expect(nonceOfTarget(target)).toEqual(want);
  });

  it.each(['169.254.7.127', '::ffff:10.88.0.1', SEAL_SOURCES.v6])('seen line round-trips %s', (address) => {
    expect(parseSeenLine(seenLine(address))).toBe(address);
  });

  it.each(['', 'seen', 'seen 10.0.0.1 extra', 'seen <script>', 'heard 10.0.0.1'])(
    'no address in %j',
    (line) => {
      expect(parseSeenLine(line)).toBeUndefined();
    },
  );
});
