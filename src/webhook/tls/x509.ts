// Makes the webhook's CA and serving certificates in-process: ECDSA P-256 keys from node:crypto, the certificate
// body written with der.ts and signed with crypto.sign. Profile (RFC 5280), as Go's crypto/x509 in the API server
// verifies it: v3, a random positive serial, the names we write as one UTF8String CN (the issuer copied from the CA), SANs for the serving certificate (Go
// ignores the CN), basicConstraints and keyUsage critical, SKI/AKI so a chain builds across CA rotations.

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from 'node:crypto';
import * as der from './der.js';

/** PEM certificate and its PKCS#8 PEM private key. */
export interface Issued {
  cert: string;
  key: string;
}

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

const ECDSA_SHA256 = der.sequence(der.oid('1.2.840.10045.4.3.2'));
const EXTENSION = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
} as const;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

const name = (commonName: string): Buffer =>
  der.sequence(der.set(der.sequence(der.oid('2.5.4.3'), der.utf8String(commonName))));

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  der.sequence(der.oid(id), ...(critical ? [der.boolean(true)] : []), der.octetString(value));

/** RFC 5280 4.2.1.2 allows any unique id; SHA-1 of the whole SPKI, the same for a key wherever it is computed. */
export function keyId(publicKey: KeyObject): Buffer {
  return createHash('sha1')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest();
}

function pem(label: string, bytes: Buffer): string {
  const lines = bytes.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

interface Body extends Validity {
  /** DER Names. */
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  issuerKeyId: Buffer;
  extensions: Buffer[];
}

function certificate(body: Body, signer: KeyObject): string {
  // Random and positive (RFC 5280 4.1.2.2: at most 20 octets): 16 random bytes, top bit cleared.
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const tbs = der.sequence(
    der.explicit(0, der.smallInteger(2)),
    der.unsignedInteger(serial),
    ECDSA_SHA256,
    body.issuer,
    der.sequence(der.time(body.notBefore), der.time(body.notAfter)),
    body.subject,
    body.publicKey.export({ type: 'spki', format: 'der' }),
    der.explicit(
      3,
      der.sequence(
        ...body.extensions,
        extension(EXTENSION.subjectKeyId, false, der.octetString(keyId(body.publicKey))),
        extension(EXTENSION.authorityKeyId, false, der.sequence(der.implicitPrimitive(0, body.issuerKeyId))),
      ),
    ),
  );
  // An ECDSA signature from crypto.sign is already the DER Ecdsa-Sig-Value the certificate carries.
  const signature = sign('sha256', tbs, signer);
  return pem('CERTIFICATE', der.sequence(tbs, ECDSA_SHA256, der.bitString(signature)));
}

function keyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

const privatePem = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString();

/** A self-signed CA that may sign end-entity certificates only (pathLen 0). */
export function mintCa(commonName: string, validity: Validity): Issued {
  const { publicKey, privateKey } = keyPair();
  const cert = certificate(
    {
      ...validity,
      subject: name(commonName),
      issuer: name(commonName),
      publicKey,
      issuerKeyId: keyId(publicKey),
      extensions: [
        extension(EXTENSION.basicConstraints, true, der.sequence(der.boolean(true), der.smallInteger(0))),
        // digitalSignature (bit 0), keyCertSign (5), cRLSign (6): 1000 0110, the last bit unused.
        extension(EXTENSION.keyUsage, true, der.bitString(Buffer.from([0x86]), 1)),
      ],
    },
    privateKey,
  );
  return { cert, key: privatePem(privateKey) };
}

/**
 * The CA's subject exactly as its certificate encodes it: the issuer of what it signs. RFC 5280 7.1 and Go's
 * crypto/x509 chain by comparing these bytes, so a re-encoded name (another string type, another order) may not match.
 */
export function subjectDer(ca: X509Certificate): Buffer {
  // An explicit [0] version comes first in a v3 certificate; then serial, signature, issuer, validity, subject.
  const fields = bodyFields(ca);
  const subject = fields[fields[0]?.[0] === 0xa0 ? 5 : 4];
  if (subject === undefined) throw new Error("the CA certificate's body has no subject");
  return subject;
}

/** The CA's subjectKeyIdentifier as its certificate holds it (a CA from elsewhere may compute it otherwise). */
function subjectKeyIdOf(ca: X509Certificate, key: KeyObject): Buffer {
  const wrapped = bodyFields(ca).find((field) => field[0] === 0xa3);
  const skiOid = der.oid(EXTENSION.subjectKeyId);
  const found =
    wrapped && der.elements(der.elements(wrapped)[0] ?? Buffer.alloc(0)).find((e) => e.includes(skiOid));
  const value = found && der.elements(found).at(-1); // extnValue: OCTET STRING of the OCTET STRING keyIdentifier
  const keyIdentifier =
    value && der.elements(Buffer.concat([Buffer.from([0x30, value.length - 2]), value.subarray(2)]));
  return keyIdentifier?.[0]?.subarray(2) ?? keyId(key);
}

function bodyFields(cert: X509Certificate): Buffer[] {
  const [tbs] = der.elements(cert.raw);
  if (tbs === undefined) throw new Error('the CA certificate has no body');
  return der.elements(tbs);
}

/** A TLS server certificate for `dnsNames`, signed by `ca`. */
export function mintServing(dnsNames: readonly string[], validity: Validity, ca: Issued): Issued {
  const { publicKey, privateKey } = keyPair();
  const caCert = new X509Certificate(ca.cert);
  const sans = der.sequence(...dnsNames.map((dns) => der.implicitPrimitive(2, Buffer.from(dns, 'ascii'))));
  const cert = certificate(
    {
      ...validity,
      subject: name(dnsNames[0] ?? 'osm-healthcheck-webhook'),
      issuer: subjectDer(caCert),
      publicKey,
      issuerKeyId: subjectKeyIdOf(caCert, createPublicKey(ca.key)),
      extensions: [
        extension(EXTENSION.basicConstraints, true, der.sequence()),
        // digitalSignature only (1000 0000, seven bits unused): an ECDSA key signs the handshake, encrypts nothing.
        extension(EXTENSION.keyUsage, true, der.bitString(Buffer.from([0x80]), 7)),
        extension(EXTENSION.extKeyUsage, false, der.sequence(der.oid(SERVER_AUTH))),
        extension(EXTENSION.subjectAltName, false, sans),
      ],
    },
    createPrivateKey(ca.key),
  );
  return { cert, key: privatePem(privateKey) };
}
