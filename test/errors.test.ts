import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';

describe('error codes', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  it.each(Object.keys(ERROR_CODES))('%s is documented in README.md', (code) => {
    expect(readme).toContain(`| \`${code}\` |`);
  });
});
