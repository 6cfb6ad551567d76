// analyze's namespace flags go into request paths: each is checked as a DNS-1123 label first, and anything else is
// a usage error (exit 2, one line naming the flag and the value) before any request is made.

import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('analyze: namespace flags are DNS-1123 labels', () => {
  it.each([
    { args: ['-n', '../secrets'], flag: '--namespace/-n', value: '"../secrets"' },
    { args: ['-n', 'Shop'], flag: '--namespace/-n', value: '"Shop"' },
    { args: ['-A', '--dry-run-namespace', 'a/b'], flag: '--dry-run-namespace', value: '"a/b"' },
    { args: ['-A', '--webhook-namespace', 'x?y=1'], flag: '--webhook-namespace', value: '"x?y=1"' },
  ])('$flag $value: usage error, exit 2', async ({ args, flag, value }) => {
    // No kubeconfig is read: the flag is refused first.
    const exit = await runCli(['analyze', '--kubeconfig', '/nonexistent', ...args]);
    expect(exit.code).toBe(2);
    expect(exit.stderr.trim()).toBe(
      `osm-healthcheck analyze: ${flag} ${value} is not accepted (a namespace name (a DNS-1123 label)) [OSM_HC_USAGE]`,
    );
  });
});
