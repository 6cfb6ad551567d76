// The one usage-error shape at its source: flags.ts builds every usage error (no other file constructs one), as
// `what is wrong (what is accepted)`, naming the flag or the env variable a value came from.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { badFlagValue, flagValue, sourceName, usageError } from '../src/flags.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

describe('usageError, badFlagValue: what is wrong (what is accepted)', () => {
  const thrown = (f: () => unknown): unknown => {
    try {
      f();
    } catch (err) {
      return err;
    }
    return undefined;
  };
  it.each([
    {
      error: usageError('--ports without --via-companion', '--ports goes with --via-companion'),
      message: '--ports without --via-companion (--ports goes with --via-companion)',
    },
    {
      error: badFlagValue('--output', 'xml', 'yaml or json'),
      message: '--output "xml" is not accepted (yaml or json)',
    },
    {
      error: badFlagValue('env POD_IP', 'pod.local', 'an IP address'),
      message: 'env POD_IP "pod.local" is not accepted (an IP address)',
    },
    {
      error: thrown(() =>
        flagValue({ invalid: '"0" is not more than 0' }, '--companion-cpu-limit ', 'a CPU quantity'),
      ),
      message: '--companion-cpu-limit "0" is not more than 0 (a CPU quantity)',
    },
  ])('$message', ({ error, message }) => {
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ code: 'OSM_HC_USAGE', message });
  });

  it('flagValue hands back what the reader made of a good value', () => {
    expect(flagValue({ value: '500m' }, '--companion-cpu-limit ', 'a CPU quantity')).toEqual({
      value: '500m',
    });
  });

  it('keeps the cause it is given', () => {
    const cause = new Error('exit 2');
    expect(usageError('a', 'b', { cause }).cause).toBe(cause);
  });
});

describe('sourceName: the flag when given, else its variable', () => {
  it.each([
    { flag: '15901,15902,15903,15904', want: '--ports' },
    { flag: '', want: '--ports' },
    { flag: undefined, want: 'env OSM_HEALTHCHECK_PORTS' },
  ])('$flag -> $want', ({ flag, want }) => {
    expect(sourceName(flag, '--ports', 'OSM_HEALTHCHECK_PORTS')).toBe(want);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('every usage error is built by flags.ts', () => {
  it('no other file of src/ constructs a UsageError or an OSM_HC_USAGE error of its own', () => {
    const elsewhere = sourceFiles(SRC)
      .map((file) => relative(SRC, file))
      .filter((file) => file !== 'flags.ts' && file !== 'errors.ts')
      .filter((file) =>
        /new UsageError\(|HealthcheckError\(\s*'OSM_HC_USAGE'/.test(readFileSync(join(SRC, file), 'utf8')),
      );
    expect(elsewhere).toEqual([]);
  });
});
