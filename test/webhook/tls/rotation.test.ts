// The Secret's next step as a table of named cases on plain facts, then each step carried out on real certificates.

import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bundleFor, trusts } from '../../../src/webhook/tls/ca-bundle.js';
import {
  carryOut,
  type Decision,
  decide,
  decideFor,
  factsOf,
  fresh,
  type Policy,
  type TlsFacts,
} from '../../../src/webhook/tls/rotation.js';

const NAMES = ['hook.ns.svc', 'hook.ns.svc.cluster.local'];
const POLICY: Policy = {
  dnsNames: NAMES,
  caLifetimeMs: 1000,
  caRotateAt: 0.8,
  servingLifetimeMs: 300,
  servingRenewAt: 2 / 3,
  overlapMs: 50,
  backdateMs: 0,
};
const FACTS: TlsFacts = {
  ca: { notBefore: 0, notAfter: 1000 },
  serving: { notBefore: 0, notAfter: 300, issuedByCa: true, dnsNames: NAMES },
};

describe('decide', () => {
  it.each<{ name: string; facts?: Partial<TlsFacts>; now: number; expected: Decision }>([
    { name: 'a fresh pair', now: 10, expected: { action: 'keep' } },
    { name: 'serving just before 2/3', now: 199, expected: { action: 'keep' } },
    { name: 'serving at 2/3', now: 200, expected: { action: 'renew-serving', why: 'due for renewal' } },
    {
      name: 'serving expired',
      facts: { serving: { ...FACTS.serving, notAfter: 100 } },
      now: 150,
      expected: { action: 'renew-serving', why: 'expired' },
    },
    {
      name: 'serving from another CA',
      facts: { serving: { ...FACTS.serving, issuedByCa: false } },
      now: 10,
      expected: { action: 'renew-serving', why: 'not signed by the CA' },
    },
    {
      name: 'serving for another service',
      facts: { serving: { ...FACTS.serving, dnsNames: ['old.ns.svc'] } },
      now: 10,
      expected: {
        action: 'renew-serving',
        why: 'names old.ns.svc, wanted hook.ns.svc,hook.ns.svc.cluster.local',
      },
    },
    {
      name: 'CA just before 80%',
      facts: { serving: { ...FACTS.serving, notBefore: 700, notAfter: 1000 } },
      now: 799,
      expected: { action: 'keep' },
    },
    { name: 'CA at 80%: stage a new one', now: 800, expected: { action: 'stage-ca' } },
    {
      name: 'staged, overlap not over',
      facts: {
        serving: { ...FACTS.serving, notBefore: 700, notAfter: 1000 },
        rotation: { phase: 'staged', at: 800 },
      },
      now: 849,
      expected: { action: 'keep' },
    },
    {
      name: 'staged, overlap over: switch',
      facts: { rotation: { phase: 'staged', at: 800 } },
      now: 850,
      expected: { action: 'switch-ca' },
    },
    {
      name: 'switched, overlap not over',
      facts: { rotation: { phase: 'switched', at: 100 } },
      now: 149,
      expected: { action: 'keep' },
    },
    {
      name: 'switched, overlap over: drop the old CA',
      facts: { rotation: { phase: 'switched', at: 100 } },
      now: 150,
      expected: { action: 'drop-previous-ca' },
    },
    {
      name: 'CA expired: start again',
      now: 1000,
      expected: { action: 'replace', why: 'the CA has expired' },
    },
  ])('$name', ({ facts, now, expected }) => {
    expect(decide({ ...FACTS, ...facts }, POLICY, now)).toEqual(expected);
  });

  it('counts a lifetime from when the certificate was made, not from its backdated notBefore', () => {
    const backdated = { ...POLICY, backdateMs: 100 };
    const facts = { ...FACTS, serving: { ...FACTS.serving, notBefore: -100, notAfter: 300 } };
    expect(decide(facts, backdated, 199)).toEqual({ action: 'keep' });
    expect(decide(facts, backdated, 200)).toEqual({ action: 'renew-serving', why: 'due for renewal' });
  });

  it.each([
    { name: 'absent', reading: { kind: 'absent' as const }, expected: { action: 'create' } },
    { name: 'not ours', reading: { kind: 'foreign' as const }, expected: { action: 'refuse' } },
    {
      name: 'ours but unreadable',
      reading: { kind: 'unreadable' as const, why: 'no tls.key', resourceVersion: '3' },
      expected: { action: 'replace', why: 'no tls.key' },
    },
  ])('a Secret $name', ({ reading, expected }) => {
    expect(decideFor(reading, POLICY, 0)).toEqual(expected);
  });
});

describe('carryOut', () => {
  const policy: Policy = {
    ...POLICY,
    caLifetimeMs: 3_600_000,
    servingLifetimeMs: 600_000,
    backdateMs: 300_000,
  };
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('makes a CA and a serving certificate for the names, backdated, the serving one trusted by the bundle', () => {
    const material = fresh(policy, now);
    const facts = factsOf(material);
    expect(facts.ca).toEqual({ notBefore: now - 300_000, notAfter: now + 3_600_000 });
    expect(facts.serving).toEqual({
      notBefore: now - 300_000,
      notAfter: now + 600_000,
      issuedByCa: true,
      dnsNames: NAMES,
    });
    expect(trusts(bundleFor(material), material.serving.cert)).toBe(true);
  });

  it('renews the serving certificate under the same CA, never past the CA', () => {
    const material = fresh({ ...policy, servingLifetimeMs: 7_200_000 }, now);
    const renewed = carryOut('renew-serving', material, policy, now + 1000);
    expect(renewed.ca).toBe(material.ca);
    expect(renewed.serving.cert).not.toBe(material.serving.cert);
    expect(bundleFor(renewed)).toBe(bundleFor(material));
    expect(factsOf(material).serving.notAfter).toBe(now + 3_600_000);
  });

  it('rotates the CA in three steps, each serving certificate trusted by the bundle before and after it', () => {
    const steady = fresh(policy, now);
    const staged = carryOut('stage-ca', steady, policy, now + 1000);
    const switched = carryOut('switch-ca', staged, policy, now + 2000);
    const done = carryOut('drop-previous-ca', switched, policy, now + 3000);
    expect(staged.serving).toBe(steady.serving);
    expect(new X509Certificate(switched.serving.cert).checkIssued(new X509Certificate(steady.ca.cert))).toBe(
      false,
    );
    const steps = [steady, staged, switched, done];
    // While replicas move from one step to the next, each serves either step's certificate and the caBundle is
    // either step's: all four combinations must be trusted.
    for (const [i, step] of steps.slice(0, -1).entries()) {
      const next = steps[i + 1] as typeof step;
      for (const bundle of [bundleFor(step), bundleFor(next)]) {
        expect(trusts(bundle, step.serving.cert), `step ${i}`).toBe(true);
        expect(trusts(bundle, next.serving.cert), `step ${i + 1}`).toBe(true);
      }
    }
    expect(bundleFor(staged)).toBe(bundleFor(switched));
    expect(trusts(bundleFor(done), steady.serving.cert)).toBe(false);
  });
});
