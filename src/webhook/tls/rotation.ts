// What to do with the Secret now: pure decisions on plain facts (times in ms, names), then the step that carries one
// out. A CA rotation never leaves a replica serving a certificate the caBundle does not trust, without replicas
// talking to each other: every step is recorded in the Secret with its time, and the next step waits `overlapMs`,
// longer than a replica takes to see the Secret and set the caBundle (docs/webhook.md, "Schedule"):
//   staged:   the new CA is in the Secret (and so in the caBundle) but signs nothing yet;
//   switched: the new CA signs the serving certificate; the old CA stays in the caBundle;
//   steady:   the old CA is dropped.

import { X509Certificate } from 'node:crypto';
import type { SecretReading, TlsMaterial } from './secret.js';
import { type Issued, mintCa, mintServing, type Validity } from './x509.js';

export interface Policy {
  /** SANs of the serving certificate: <service>.<namespace>.svc and .svc.cluster.local. */
  dnsNames: readonly string[];
  caLifetimeMs: number;
  /** Share of the CA's lifetime after which a new CA is staged (0.8). */
  caRotateAt: number;
  servingLifetimeMs: number;
  /** Share of the serving certificate's lifetime after which it is renewed (2/3). */
  servingRenewAt: number;
  /** How long each rotation step waits for every replica to follow the previous one. */
  overlapMs: number;
  /** notBefore is set this far in the past: a node whose clock is behind still accepts a new certificate. */
  backdateMs: number;
}

const DAY = 86_400_000;
export const POLICY: Omit<Policy, 'dnsNames'> = {
  caLifetimeMs: 3650 * DAY,
  caRotateAt: 0.8,
  servingLifetimeMs: 365 * DAY,
  servingRenewAt: 2 / 3,
  overlapMs: 10 * 60_000,
  backdateMs: 5 * 60_000,
};

/** The plain data the decision needs, read from TlsMaterial by factsOf. */
export interface TlsFacts {
  ca: { notBefore: number; notAfter: number };
  serving: { notBefore: number; notAfter: number; issuedByCa: boolean; dnsNames: readonly string[] };
  rotation?: { phase: 'staged' | 'switched'; at: number };
}

export type Decision =
  | { action: 'create' }
  | { action: 'refuse' }
  | { action: 'replace'; why: string }
  | { action: 'keep' }
  | { action: 'renew-serving'; why: string }
  | { action: 'stage-ca' }
  | { action: 'switch-ca' }
  | { action: 'drop-previous-ca' };

/** Share of a lifetime gone, counted from when it was made: the backdated minutes are no part of it. */
function used(span: { notBefore: number; notAfter: number }, now: number, backdateMs: number): number {
  const made = span.notBefore + backdateMs;
  return (now - made) / (span.notAfter - made);
}

/** One step at a time: whatever the Secret needs next is decided again after the write. */
export function decide(facts: TlsFacts, policy: Policy, now: number): Decision {
  // An expired CA is trusted by nobody any more: start again at once, no overlap can help.
  if (now >= facts.ca.notAfter) return { action: 'replace', why: 'the CA has expired' };
  const { rotation, serving } = facts;
  if (rotation?.phase === 'staged' && now >= rotation.at + policy.overlapMs) return { action: 'switch-ca' };
  if (rotation?.phase === 'switched' && now >= rotation.at + policy.overlapMs) {
    return { action: 'drop-previous-ca' };
  }
  if (rotation === undefined && used(facts.ca, now, policy.backdateMs) >= policy.caRotateAt)
    return { action: 'stage-ca' };
  const why = !serving.issuedByCa
    ? 'not signed by the CA'
    : serving.dnsNames.join(',') !== policy.dnsNames.join(',')
      ? `names ${serving.dnsNames.join(',')}, wanted ${policy.dnsNames.join(',')}`
      : now >= serving.notAfter
        ? 'expired'
        : used(serving, now, policy.backdateMs) >= policy.servingRenewAt
          ? 'due for renewal'
          : undefined;
  return why === undefined ? { action: 'keep' } : { action: 'renew-serving', why };
}

/** The decision for what a GET returned. */
export function decideFor(reading: SecretReading, policy: Policy, now: number): Decision {
  switch (reading.kind) {
    case 'absent':
      return { action: 'create' };
    case 'foreign':
      return { action: 'refuse' };
    case 'unreadable':
      return { action: 'replace', why: reading.why };
    case 'ours':
      return decide(factsOf(reading.material), policy, now);
    default:
      return reading satisfies never;
  }
}

const span = (cert: X509Certificate) => ({
  notBefore: Date.parse(cert.validFrom),
  notAfter: Date.parse(cert.validTo),
});

/** SANs as X509Certificate prints them: "DNS:a, DNS:b". */
const dnsNamesOf = (cert: X509Certificate): string[] =>
  (cert.subjectAltName ?? '')
    .split(', ')
    .filter((name) => name.startsWith('DNS:'))
    .map((name) => name.slice(4));

export function factsOf(material: TlsMaterial): TlsFacts {
  const ca = new X509Certificate(material.ca.cert);
  const serving = new X509Certificate(material.serving.cert);
  const { rotation } = material;
  return {
    ca: span(ca),
    serving: {
      ...span(serving),
      issuedByCa: serving.checkIssued(ca) && serving.verify(ca.publicKey),
      dnsNames: dnsNamesOf(serving),
    },
    ...(rotation === undefined ? {} : { rotation: { phase: rotation.phase, at: rotation.at.getTime() } }),
  };
}

function validity(policy: Policy, now: number, lifetimeMs: number, notAfterAtMost = Infinity): Validity {
  return {
    notBefore: new Date(now - policy.backdateMs),
    notAfter: new Date(Math.min(now + lifetimeMs, notAfterAtMost)),
  };
}

const newCa = (policy: Policy, now: number): Issued =>
  // The time in the name tells CAs apart in `openssl x509 -text` and in the caBundle.
  mintCa(`osm-healthcheck-webhook-ca@${Math.floor(now / 1000)}`, validity(policy, now, policy.caLifetimeMs));

/** A serving certificate from `ca`, never outliving it. */
const newServing = (ca: Issued, policy: Policy, now: number): Issued =>
  mintServing(
    policy.dnsNames,
    validity(policy, now, policy.servingLifetimeMs, Date.parse(new X509Certificate(ca.cert).validTo)),
    ca,
  );

export function fresh(policy: Policy, now: number): TlsMaterial {
  const ca = newCa(policy, now);
  return { ca, serving: newServing(ca, policy, now) };
}

/** The material after a decision that writes; `current` is what the Secret holds (absent for create/replace). */
export function carryOut(
  action: 'renew-serving' | 'stage-ca' | 'switch-ca' | 'drop-previous-ca',
  current: TlsMaterial,
  policy: Policy,
  now: number,
): TlsMaterial {
  const { rotation } = current;
  switch (action) {
    case 'renew-serving':
      return { ...current, serving: newServing(current.ca, policy, now) };
    case 'stage-ca':
      return { ...current, rotation: { phase: 'staged', next: newCa(policy, now), at: new Date(now) } };
    case 'switch-ca': {
      if (rotation?.phase !== 'staged') throw new Error('switch-ca needs a staged CA');
      return {
        ca: rotation.next,
        serving: newServing(rotation.next, policy, now),
        rotation: { phase: 'switched', previousCaCert: current.ca.cert, at: new Date(now) },
      };
    }
    case 'drop-previous-ca':
      return { ca: current.ca, serving: current.serving };
    default:
      return action satisfies never;
  }
}

/** What the Secret should hold after `decision`; undefined when it stays as it is. */
export function materialAfter(
  reading: SecretReading,
  decision: Decision,
  policy: Policy,
  now: number,
): TlsMaterial | undefined {
  switch (decision.action) {
    case 'keep':
    case 'refuse':
      return undefined;
    case 'create':
    case 'replace':
      return fresh(policy, now);
    default:
      if (reading.kind !== 'ours') throw new Error(`${decision.action} needs a Secret of ours`);
      return carryOut(decision.action, reading.material, policy, now);
  }
}
