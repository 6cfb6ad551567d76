import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, HealthcheckError, isHealthcheckError, TableError } from '../src/errors.js';

describe('error codes', () => {
  const page = readFileSync(new URL('../docs/error-codes.md', import.meta.url), 'utf8');
  it.each(Object.keys(ERROR_CODES))('%s is documented in docs/error-codes.md', (code) => {
    expect(page).toContain(`| \`${code}\` |`);
  });
});

describe('isHealthcheckError', () => {
  // What another bundle's copy of errors.ts throws: the same shape, a different class.
  class OtherCopy extends Error {
    readonly code = 'OSM_HC_LISTEN';
  }
  const systemError = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

  it.each([
    { name: 'our own class', err: new HealthcheckError('OSM_HC_INIT', 'x'), want: true },
    { name: 'a subclass', err: new TableError('liveness', 'x'), want: true },
    { name: "another bundle's copy", err: new OtherCopy('x'), want: true },
    { name: 'a node system error', err: systemError, want: false },
    { name: 'a plain object with our code', err: { code: 'OSM_HC_USAGE', message: 'x' }, want: false },
    { name: 'an Error without a code', err: new Error('x'), want: false },
    {
      name: "an inherited name such as 'toString'",
      err: Object.assign(new Error('x'), { code: 'toString' }),
      want: false,
    },
    { name: 'null', err: null, want: false },
  ])('$name: $want', ({ err, want }) => {
    expect(isHealthcheckError(err)).toBe(want);
  });
});
