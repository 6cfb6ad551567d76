// The serving certificate: refused up front when it cannot be used, and rotated while serving, both by
// rewriting the files in place and by a Kubernetes secret volume's `..data` symlink swap.

import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HealthcheckError } from '../../src/errors.js';
import { loadKeyPair } from '../../src/webhook/certificate.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';
import { startHarness } from './harness.js';

describe('loadKeyPair refuses what it cannot serve, naming the file', () => {
  // Made at collection time because the table below names their files; removed after the suite.
  const a = makeTestCert();
  const b = makeTestCert();
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bad-cert-'));
  const garbage = join(dir, 'garbage.pem');
  writeFileSync(garbage, 'not a certificate\n');
  afterAll(() => {
    a.cleanup();
    b.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    {
      name: 'no certificate file',
      cert: join(dir, 'none.crt'),
      key: a.keyFile,
      message: /^cannot read the TLS certificate .*none\.crt: ENOENT/,
    },
    {
      name: 'no key file',
      cert: a.certFile,
      key: join(dir, 'none.key'),
      message: /^cannot read the TLS key .*none\.key: ENOENT/,
    },
    {
      name: 'a certificate file without a certificate',
      cert: garbage,
      key: a.keyFile,
      message: /garbage\.pem holds no PEM certificate/,
    },
    {
      name: 'a key file without a key',
      cert: a.certFile,
      key: garbage,
      message: /^the key .*garbage\.pem cannot be used with the certificate /,
    },
    {
      name: "another certificate's key",
      cert: a.certFile,
      key: b.keyFile,
      message: /cannot be used with the certificate .*: .*key values mismatch/,
    },
  ])('$name', async ({ cert, key, message }) => {
    const thrown = await loadKeyPair(cert, key).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(HealthcheckError);
    expect(thrown).toMatchObject({ code: 'OSM_HC_TLS' });
    expect((thrown as Error).message).toMatch(message);
  });

  it('a good pair: its fingerprint and expiry', async () => {
    const pair = await loadKeyPair(a.certFile, a.keyFile);
    expect(pair.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(new Date(pair.notAfter).getTime()).toBeGreaterThan(Date.now());
  });
});

describe('certificate rotation while serving', () => {
  it('files rewritten in place: a new connection gets the new certificate; a bad one keeps the old', async () => {
    const harness = await startHarness();
    const next = makeTestCert();
    const later = makeTestCert();
    try {
      const first = await harness.servedFingerprint();
      expect(first).toBe(harness.webhook.keyPair().fingerprint);

      // As a careless rotation might: the certificate replaced by garbage. The old pair stays in use.
      writeFileSync(harness.cert.certFile, 'garbage\n');
      const refused = await harness.logLine(
        (l) => l.msg === 'new certificate not loaded; still serving the previous one',
      );
      expect(refused).toMatchObject({ level: 'error', fingerprint: first });
      expect(await harness.servedFingerprint()).toBe(first);

      // Key first, then certificate, as two separate writes: the debounce reads the pair once both are there.
      writeFileSync(harness.cert.keyFile, next.key);
      writeFileSync(harness.cert.certFile, next.cert);
      const expected = (await loadKeyPair(next.certFile, next.keyFile)).fingerprint;
      await harness.logLine((l) => l.msg === 'certificate reloaded' && l.fingerprint === expected);
      expect(await harness.servedFingerprint()).toBe(expected);
      expect(harness.webhook.keyPair().fingerprint).toBe(expected);

      // And again: every rotation is picked up, not only the first.
      writeFileSync(harness.cert.keyFile, later.key);
      writeFileSync(harness.cert.certFile, later.cert);
      const third = (await loadKeyPair(later.certFile, later.keyFile)).fingerprint;
      await harness.logLine((l) => l.msg === 'certificate reloaded' && l.fingerprint === third);
      expect(await harness.servedFingerprint()).toBe(third);
    } finally {
      next.cleanup();
      later.cleanup();
      await harness.close();
    }
  });

  it("a secret volume's atomic `..data` symlink swap is picked up", async () => {
    const initial = makeTestCert();
    const next = makeTestCert();
    const volume = mkdtempSync(join(tmpdir(), 'osm-hc-secret-'));
    // The layout kubelet's AtomicWriter makes: timestamped dir, `..data` -> it, files -> `..data/<file>`.
    const version = (name: string, cert: TestCert) => {
      mkdirSync(join(volume, name));
      writeFileSync(join(volume, name, 'tls.crt'), cert.cert);
      writeFileSync(join(volume, name, 'tls.key'), cert.key);
    };
    version('..2024_01_01_00_00_00.1', initial);
    symlinkSync('..2024_01_01_00_00_00.1', join(volume, '..data'));
    symlinkSync('..data/tls.crt', join(volume, 'tls.crt'));
    symlinkSync('..data/tls.key', join(volume, 'tls.key'));
    const files: TestCert = {
      ...initial,
      certFile: join(volume, 'tls.crt'),
      keyFile: join(volume, 'tls.key'),
      cleanup: () => rmSync(volume, { recursive: true, force: true }),
    };
    const harness = await startHarness({ cert: files });
    try {
      expect(await harness.servedFingerprint()).toBe(harness.webhook.keyPair().fingerprint);
      version('..2024_02_01_00_00_00.2', next);
      symlinkSync('..2024_02_01_00_00_00.2', join(volume, '..data_tmp'));
      renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
      const expected = (await loadKeyPair(next.certFile, next.keyFile)).fingerprint;
      await harness.logLine((l) => l.msg === 'certificate reloaded' && l.fingerprint === expected);
      expect(await harness.servedFingerprint()).toBe(expected);
    } finally {
      await harness.close();
      initial.cleanup();
      next.cleanup();
    }
  });
});
