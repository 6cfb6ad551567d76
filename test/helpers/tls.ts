// A throwaway self-signed certificate for tests, made in-process at run time so no key lives in git and no
// system tool is needed: node:crypto's P-256 key and signature, and the webhook's own DER writer
// (src/webhook/tls/der.ts), in the shape `openssl req -x509` writes (a CA certificate that is also the server's).

import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as der from '../../src/webhook/tls/der.js';

export interface TestCert {
  key: string;
  cert: string;
  /** Files holding the same key and certificate, for code that reads paths. Removed by `cleanup`. */
  keyFile: string;
  certFile: string;
  cleanup(): void;
}

const ECDSA_SHA256 = der.sequence(der.oid('1.2.840.10045.4.3.2'));
const DAY_MS = 24 * 60 * 60 * 1000;

const pem = (label: string, bytes: Buffer): string =>
  `-----BEGIN ${label}-----\n${(bytes.toString('base64').match(/.{1,64}/g) ?? []).join('\n')}\n-----END ${label}-----\n`;

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  der.sequence(der.oid(id), ...(critical ? [der.boolean(true)] : []), der.octetString(value));

/** A subjectAltName entry: `DNS:name` (dNSName, [2]) or `IP:a.b.c.d` (iPAddress, [7]). */
function altName(entry: string): Buffer {
  const [kind, value = ''] = entry.split(/:(.*)/s);
  if (kind === 'DNS') return der.implicitPrimitive(2, Buffer.from(value, 'ascii'));
  if (kind === 'IP' && isIPv4(value))
    return der.implicitPrimitive(7, Buffer.from(value.split('.').map(Number)));
  throw new Error(`test certificate: unsupported subjectAltName ${JSON.stringify(entry)}`);
}

export function makeTestCert(
  commonName = 'localhost',
  altNames = ['DNS:localhost', 'IP:127.0.0.1'],
  validDays = 2,
): TestCert {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = der.sequence(der.set(der.sequence(der.oid('2.5.4.3'), der.utf8String(commonName))));
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const now = Date.now();
  const tbs = der.sequence(
    der.explicit(0, der.smallInteger(2)),
    der.unsignedInteger(serial),
    ECDSA_SHA256,
    name,
    der.sequence(der.time(new Date(now - DAY_MS)), der.time(new Date(now + validDays * DAY_MS))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    der.explicit(
      3,
      der.sequence(
        // basicConstraints CA:TRUE, as openssl req -x509 writes: the certificate is its own trust anchor.
        extension('2.5.29.19', true, der.sequence(der.boolean(true))),
        extension('2.5.29.17', false, der.sequence(...altNames.map(altName))),
      ),
    ),
  );
  const cert = pem(
    'CERTIFICATE',
    der.sequence(tbs, ECDSA_SHA256, der.bitString(sign('sha256', tbs, privateKey))),
  );
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-cert-'));
  const keyFile = join(dir, 'tls.key');
  const certFile = join(dir, 'tls.crt');
  writeFileSync(keyFile, key);
  writeFileSync(certFile, cert);
  return { key, cert, keyFile, certFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
