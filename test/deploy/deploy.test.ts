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
    // Without --kube-version the companion goes first, and inject says so (--placement auto).
    expect(result.stderr).toBe(
      'note: the companion goes first among the containers (placement auto): the Kubernetes version is not known: with --kube-version 1.33+ it is a native sidecar\n',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(`${ROOT}${after}`, 'utf8'));
  });
});
