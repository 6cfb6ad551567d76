// deploy/: the example app after `inject` is exactly what the built CLI makes of the example app before it, so
// the pair shown to users never drifts from what inject really writes.

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';

const PAIRS = readdirSync(`${ROOT}deploy`)
  .filter((file) => file.endsWith('.yaml') && !file.endsWith('.injected.yaml'))
  .map((file) => ({
    name: file,
    before: `deploy/${file}`,
    after: `deploy/${file.replace(/\.yaml$/, '.injected.yaml')}`,
  }));

describe('deploy/ examples', () => {
  it('has at least one before/after pair', () => {
    expect(PAIRS.map((p) => p.name)).toContain('podinfo.yaml');
  });

  it.each(PAIRS)('$after is `osm-healthcheck inject -f $before`', async ({ before, after }) => {
    const result = await runCli(['inject', '-f', before]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(`${ROOT}${after}`, 'utf8'));
  });
});
