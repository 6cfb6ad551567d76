// The supervisor's restart count as serve reads it from its env: absent is 0, anything but a whole number names
// the variable.

import { describe, expect, it } from 'vitest';
import { isHealthcheckError } from '../../src/errors.js';
import { parseRestarts } from '../../src/server/restarts.js';

describe('parseRestarts', () => {
  it.each([
    { name: 'unset: serve runs unsupervised', text: undefined, want: 0 },
    { name: 'the first serve', text: '0', want: 0 },
    { name: 'after restarts', text: '12', want: 12 },
  ])('$name', ({ text, want }) => {
    expect(parseRestarts(text)).toBe(want);
  });

  it.each([
    { name: 'empty', text: '' },
    { name: 'negative', text: '-1' },
    { name: 'a fraction', text: '1.5' },
    { name: 'a word', text: 'many' },
    { name: 'beyond a safe integer', text: '9'.repeat(20) },
  ])('refuses $name, naming the variable', ({ text }) => {
    let caught: unknown;
    try {
      parseRestarts(text);
    } catch (err) {
      caught = err;
    }
    expect(isHealthcheckError(caught) && caught.code).toBe('OSM_HC_USAGE');
    expect(String((caught as Error).message)).toContain('OSM_HEALTHCHECK_RESTARTS');
  });
});
