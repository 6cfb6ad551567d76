// A throwaway self-signed certificate for tests, made with openssl at run time so no key lives in git. The suites
// that serve or trust one (webhook, HTTPS probes, check, e2e pod) cannot run without openssl: they fail, naming it.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missing, OPENSSL } from './system-tools.js';

export interface TestCert {
  key: string;
  cert: string;
  /** Files holding the same key and certificate, for code that reads paths. Removed by `cleanup`. */
  keyFile: string;
  certFile: string;
  cleanup(): void;
}

export function makeTestCert(
  commonName = 'localhost',
  altNames = ['DNS:localhost', 'IP:127.0.0.1'],
): TestCert {
  if (!OPENSSL.present)
    throw new Error(`a test certificate needs ${missing([OPENSSL])}; .ci/run installs it`);
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-cert-'));
  const keyFile = join(dir, 'tls.key');
  const certFile = join(dir, 'tls.crt');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      `subjectAltName=${altNames.join(',')}`,
    ],
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(keyFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    keyFile,
    certFile,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
