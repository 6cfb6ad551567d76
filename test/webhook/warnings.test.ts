// admissionWarnings: what the API server does with a webhook's warnings (filters/warning.go: dedupe, 256 runes
// an item once truncating, 4096 in all; util/net NewWarningHeader: no control characters) never bites ours.

import { describe, expect, it } from 'vitest';
import { admissionWarnings, WARNING_LIMITS } from '../../src/webhook/warnings.js';

const P = 'osm-healthcheck: ';
const runes = (text: string) => Array.from(text).length;

describe('admissionWarnings', () => {
  it.each([
    { name: 'none', input: [], want: [] },
    { name: 'one, prefixed', input: ['Pod/p: a'], want: [`${P}Pod/p: a`] },
    { name: 'a repeated one, once', input: ['x', 'y', 'x'], want: [`${P}x`, `${P}y`] },
    { name: 'an empty one, dropped', input: ['', '  ', 'z'], want: [`${P}z`] },
    {
      name: 'newlines, tabs and other control characters: one line',
      input: ['a\nb\r\n\tc\u0000d\u001be\u007ff\u0085g'],
      want: [`${P}a b c d e f g`],
    },
    { name: 'a lone surrogate: U+FFFD', input: ['bad \ud800 half'], want: [`${P}bad \ufffd half`] },
    {
      name: 'over 256 runes: cut to 256 with an ellipsis',
      input: ['é'.repeat(300)],
      want: [`${P}${'é'.repeat(256 - runes(P) - 1)}…`],
    },
    {
      name: 'exactly 256 runes: kept whole',
      input: ['ü'.repeat(256 - runes(P))],
      want: [`${P}${'ü'.repeat(256 - runes(P))}`],
    },
  ])('$name', ({ input, want }) => {
    expect(admissionWarnings(input, P)).toEqual(want);
  });

  it('too many: those past the total are counted in one last line', () => {
    const input = Array.from({ length: 40 }, (_, i) => `Pod/p${i}: ${'w'.repeat(100)}`);
    const out = admissionWarnings(input, P);
    const last = out.at(-1);
    expect(last).toMatch(/^osm-healthcheck: \d+ more warnings not shown: the webhook's log has them all$/);
    const shown = out.length - 1;
    expect(last).toContain(`${input.length - shown} more`);
    expect(out.slice(0, shown)).toEqual(input.slice(0, shown).map((w) => `${P}${w}`));
  });

  it.each([
    { name: 'many short', input: Array.from({ length: 500 }, (_, i) => `w${i}`) },
    { name: 'many long', input: Array.from({ length: 500 }, (_, i) => `${i} ${'x'.repeat(400)}`) },
    { name: 'a few long', input: Array.from({ length: 5 }, (_, i) => `${i}\n${'y'.repeat(1000)}`) },
    { name: 'multi-byte', input: Array.from({ length: 90 }, (_, i) => `${i} ${'😀'.repeat(90)}`) },
  ])('the limits hold: $name', ({ input }) => {
    const out = admissionWarnings(input, P);
    expect(out.length).toBeGreaterThan(0);
    expect(new Set(out).size).toBe(out.length);
    for (const line of out) {
      expect(runes(line)).toBeLessThanOrEqual(WARNING_LIMITS.itemRunes);
      // What NewWarningHeader refuses: control characters; and no lone surrogates.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what must not appear.
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(Buffer.from(line, 'utf8').toString('utf8')).toBe(line);
      expect(line.startsWith(P)).toBe(true);
    }
    expect(out.reduce((sum, line) => sum + runes(line), 0)).toBeLessThanOrEqual(WARNING_LIMITS.totalRunes);
    // Within the API server's own total, so it never starts truncating on our account.
    expect(WARNING_LIMITS.totalRunes).toBeLessThanOrEqual(4096);
  });
});
