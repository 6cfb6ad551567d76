// How the envtest suites find their kube-apiservers (test/helpers/envtest-binaries.ts): each supported version's
// gz and SHA256SUMS in ../shared/envtest, unpacked once into a cache named by checksum and checked before use; a
// variable that names a binary of one's own; and, where nothing is found, a skip that says what to provide. Stand-in
// "binaries" are small shell scripts, gzipped here as the real ones are.

import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  APISERVER_ENV,
  apiServerBinaries,
  SUPPORTED_VERSIONS,
  versionEnv,
} from '../helpers/envtest-binaries.js';

let dir: string;
let shared: string;
let cache: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'osm-hc-envtest-binaries-'));
  shared = join(dir, 'shared', 'envtest');
  cache = join(dir, 'cache');
  mkdirSync(shared, { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const script = (version: string) => `#!/bin/sh\necho "Kubernetes ${version}"\n`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** `version` as ../shared/envtest keeps it: `<folder>/kube-apiserver-<v>-linux-amd64.gz` and SHA256SUMS. */
function keep(version: string, folder: string, sum = sha256(script(version))): void {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `kube-apiserver-${version}-linux-amd64.gz`), gzipSync(script(version)));
  writeFileSync(join(folder, 'SHA256SUMS'), `${sum}  kube-apiserver\n`);
}

describe('the kube-apiservers of ../shared/envtest', () => {
  it('one per supported version, newest first: the newest at the top, the others in their own folders', async () => {
    keep('v1.36.3', shared);
    keep('v1.32.13', join(shared, 'v1.32.13'));
    keep('v1.26.3', join(shared, 'v1.26.3'));
    const found = apiServerBinaries({ shared, env: {}, cache });
    expect(found.map((b) => [b.version, b.minor, b.need.present])).toEqual([
      ['v1.36.3', 36, true],
      ['v1.32.13', 32, true],
      ['v1.26.3', 26, true],
    ]);
    const old = found[2];
    const path = await old?.path();
    expect(path).toBe(join(cache, sha256(script('v1.26.3')), 'kube-apiserver'));
    expect(readFileSync(path as string, 'utf8')).toBe(script('v1.26.3'));
    expect(statSync(path as string).mode & 0o777).toBe(0o755);
    // Unpacked once: a second lookup finds the checked file where the first put it.
    const again = await apiServerBinaries({ shared, env: {}, cache })[2]?.path();
    expect(again).toBe(path);
  });

  it('absent: the skip names the paths it looked at and the variable that would do instead', async () => {
    const [newest] = apiServerBinaries({ shared, env: {}, cache });
    expect(newest?.need.present).toBe(false);
    expect(newest?.need.how).toBe(
      `${join(shared, 'v1.36.3', 'kube-apiserver-v1.36.3-linux-amd64.gz')} or ${join(shared, 'kube-apiserver-v1.36.3-linux-amd64.gz')} ` +
        `with the SHA256SUMS of the unpacked file beside it (../shared/envtest/README.md), or ${APISERVER_ENV}_1_36_3=<an unpacked kube-apiserver v1.36.3>`,
    );
    await expect(newest?.path()).rejects.toThrow(/no kube-apiserver v1.36.3/);
  });

  it('a gz that does not unpack to its checksum: an error naming both, and nothing left in the cache', async () => {
    keep('v1.36.3', shared, 'f'.repeat(64));
    const [newest] = apiServerBinaries({ shared, env: {}, cache });
    await expect(newest?.path()).rejects.toThrow(
      `unpacks to sha256 ${sha256(script('v1.36.3'))}, ${join(shared, 'SHA256SUMS')} says ${'f'.repeat(64)}`,
    );
    expect(() => statSync(join(cache, 'f'.repeat(64), 'kube-apiserver'))).toThrow();
  });
});

describe("a binary of one's own", () => {
  it(`${APISERVER_ENV}: that one only, its version from --version`, async () => {
    const bin = join(dir, 'kube-apiserver');
    writeFileSync(bin, script('v1.30.2'), { mode: 0o755 });
    const found = apiServerBinaries({ shared, env: { [APISERVER_ENV]: bin }, cache });
    expect(found.map((b) => [b.version, b.minor, b.need.present])).toEqual([['v1.30.2', 30, true]]);
    expect(await found[0]?.path()).toBe(bin);
  });

  it('a per-version variable: that version from it, the others from ../shared/envtest', () => {
    const bin = join(dir, 'kube-apiserver');
    writeFileSync(bin, script('v1.26.3'), { mode: 0o755 });
    const found = apiServerBinaries({ shared, env: { [versionEnv('v1.26.3')]: bin }, cache });
    expect(versionEnv('v1.26.3')).toBe('OSM_HC_KUBE_APISERVER_1_26_3');
    expect(found.map((b) => [b.version, b.need.present])).toEqual(
      SUPPORTED_VERSIONS.map((v) => [v, v === 'v1.26.3']),
    );
  });
});
