// The certificates x509.ts makes, judged by openssl (the text it prints, `openssl verify -purpose sslserver`) and
// by a real TLS handshake that trusts only the CA and checks the Service's name.

import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { elements } from '../../../src/webhook/tls/der.js';
import { mintCa, mintServing, subjectDer } from '../../../src/webhook/tls/x509.js';
import { OPENSSL, skipWithout } from '../../helpers/system-tools.js';

const dir = mkdtempSync(join(tmpdir(), 'osm-hc-x509-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const now = Date.now();
const validity = { notBefore: new Date(now - 300_000), notAfter: new Date(now + 86_400_000) };
const ca = mintCa('osm-healthcheck-webhook-ca@1', validity);
const names = ['hook.ns.svc', 'hook.ns.svc.cluster.local'];
const serving = mintServing(names, validity, ca);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8' });
/** The handshake case needs no openssl; the cases that ask openssl's opinion skip (loudly) without it. */
const NO_OPENSSL = skipWithout("test/webhook/tls/x509.test.ts's openssl cases", [OPENSSL]);

describe('x509', () => {
  it.skipIf(NO_OPENSSL)('openssl reads the CA as a v3 CA that may sign end-entity certificates', () => {
    const text = openssl('x509', '-in', file('ca.crt', ca.cert), '-noout', '-text');
    expect(text).toContain('Version: 3 (0x2)');
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(text).toContain('Subject: CN = osm-healthcheck-webhook-ca@1');
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
  });

  it.skipIf(NO_OPENSSL)(
    'openssl reads the serving certificate: SANs, server auth, not a CA, SKI/AKI chained to the CA',
    () => {
      const text = openssl('x509', '-in', file('tls.crt', serving.cert), '-noout', '-text');
      expect(text).toContain('Issuer: CN = osm-healthcheck-webhook-ca@1');
      expect(text).toContain('DNS:hook.ns.svc, DNS:hook.ns.svc.cluster.local');
      expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
      expect(text).toMatch(/Extended Key Usage:\s+TLS Web Server Authentication/);
      const caText = openssl('x509', '-in', file('ca.crt', ca.cert), '-noout', '-text');
      const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(caText)?.[1];
      expect(text).toContain(`Authority Key Identifier: \n                ${ski}`);
    },
  );

  it.skipIf(NO_OPENSSL)('openssl verify accepts it for a TLS server with only the CA trusted', () => {
    expect(
      openssl(
        'verify',
        '-CAfile',
        file('ca.crt', ca.cert),
        '-purpose',
        'sslserver',
        file('tls.crt', serving.cert),
      ),
    ).toContain(': OK');
  });

  it('a TLS client trusting only the CA connects by the Service name, and refuses another name', async () => {
    const server = createServer({ cert: serving.cert, key: serving.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const handshake = (servername: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, servername, ca: ca.cert }, () => {
          socket.end();
          resolve('trusted');
        });
        socket.on('error', (err) => reject(err));
      });
    try {
      expect(await handshake('hook.ns.svc')).toBe('trusted');
      expect(await handshake('hook.ns.svc.cluster.local')).toBe('trusted');
      await expect(handshake('other.ns.svc')).rejects.toThrow(/Hostname\/IP does not match/);
    } finally {
      server.close();
    }
  });

  it.skipIf(NO_OPENSSL)(
    "signed by a CA whose subject is no single UTF8String CN, the issuer is that subject's bytes as they are",
    () => {
      // openssl writes C as a PrintableString and puts three RDNs in order: a re-encoded name would differ.
      const key = file('outside-ca.key', openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout'));
      const pem = openssl(
        'req',
        '-x509',
        '-new',
        '-key',
        key,
        '-subj',
        '/C=DE/O=Example Org/CN=Outside CA',
        '-days',
        '2',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      );
      const outside = { cert: pem, key: openssl('pkey', '-in', key) };
      const leaf = mintServing(names, validity, outside);
      const caSubject = subjectDer(new X509Certificate(outside.cert));
      expect(caSubject.includes(Buffer.from([0x13, 0x02, 0x44, 0x45]))).toBe(true); // PrintableString "DE"
      const leafIssuer = issuerDer(new X509Certificate(leaf.cert));
      expect(leafIssuer.equals(caSubject)).toBe(true);
      expect(
        openssl('verify', '-CAfile', file('outside-ca.crt', outside.cert), file('outside.crt', leaf.cert)),
      ).toContain(': OK');
    },
  );
});

/** A v3 certificate's issuer bytes: version, serial and signature come before it in the body. */
function issuerDer(cert: X509Certificate): Buffer {
  const [tbs] = elements(cert.raw);
  return elements(tbs ?? Buffer.alloc(0))[3] ?? Buffer.alloc(0);
}
