// The bench's arithmetic and where it writes its results: pure functions, tested with tables.

import { describe, expect, it } from 'vitest';
import { placeResults } from '../../bench/report.mjs';
import { formatSummary, percentile, ratioSummary, summary } from '../../bench/stats.mjs';

describe('percentile (nearest rank)', () => {
  it.each([
    { samples: [5, 1, 3], q: 0.5, want: 3 },
    { samples: [1, 2, 3, 4], q: 0.5, want: 2 },
    { samples: [1, 2, 3, 4], q: 0.99, want: 4 },
    { samples: [7], q: 0, want: 7 },
    { samples: [], q: 0.5, want: Number.NaN },
  ])('$samples at $q is $want', ({ samples, q, want }) => {
    expect(percentile(samples, q)).toBe(want);
  });
});

describe('summary and ratios across rounds', () => {
  it('takes the median (mean of the middle two for an even count) with min and max', () => {
    expect(summary([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, n: 3 });
    expect(summary([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4, n: 4 });
  });

  it('pairs rounds before dividing, so a slow round on both sides cancels out', () => {
    // Per round 0.9, 1.0, 0.8: a ratio of medians would say 1.0 (900 / 900).
    expect(ratioSummary([900, 500, 1200], [1000, 500, 1500])).toEqual({
      median: 0.9,
      min: 0.8,
      max: 1,
      n: 3,
    });
  });

  it('formats median (min–max)', () => {
    expect(formatSummary({ median: 1.234, min: 1, max: 2.5, n: 3 }, 2)).toBe('1.23 (1.00–2.50)');
  });
});

describe('placeResults', () => {
  const doc = [
    '# Benchmarks',
    '',
    '### Node 20',
    '',
    '<!-- bench:results node20 -->',
    'old 20',
    '<!-- /bench:results node20 -->',
    '',
    '## Before and after',
    '',
  ].join('\n');

  it("replaces only that major's block and keeps the prose around it", () => {
    const next = placeResults(doc, '20', 'new 20');
    expect(next).toBe(doc.replace('old 20', 'new 20'));
  });

  it("adds a first run on another major after the other majors' blocks, before the prose", () => {
    const next = placeResults(doc, '24', 'new 24');
    expect(next).toContain(
      '<!-- /bench:results node20 -->\n\n### Node 24\n\n<!-- bench:results node24 -->\nnew 24\n<!-- /bench:results node24 -->\n\n## Before and after',
    );
    expect(placeResults(next, '24', 'newer 24')).toBe(next.replace('new 24', 'newer 24'));
  });

  it('appends to a file without any block', () => {
    expect(placeResults('# Benchmarks\n', '20', 'x')).toBe(
      '# Benchmarks\n\n### Node 20\n\n<!-- bench:results node20 -->\nx\n<!-- /bench:results node20 -->\n',
    );
  });
});
