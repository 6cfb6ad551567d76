// What the webhook counts for Prometheus, as plain numbers: admissions by outcome and their durations, each
// watched collection's signs of life, and its certificates. No prom-client here: exposition.ts, loaded on the
// first scrape, reads these numbers then. Every series is made up front from fixed sets (admission-outcome.ts, the
// four collections), so each exists at 0 from the first scrape and no request can add one.

import { durationBuckets } from '../../metrics/buckets.js';
import { cumulativeOf, type HistogramSample, slotOf } from '../../metrics/histogram.js';
import {
  ADMISSION_OUTCOMES,
  type AdmissionOutcome,
  type AdmissionOutcomeName,
  OUTCOME_PAIRS,
} from '../admission-outcome.js';
import type { CacheActivity } from '../reflector.js';

/** The collections the webhook lists and watches (reflector.ts), by their plural. */
export const CACHE_RESOURCES = ['namespaces', 'limitranges', 'resourcequotas', 'nodes'] as const;
export type CacheResource = (typeof CACHE_RESOURCES)[number];

export const CERTIFICATES = ['serving', 'ca'] as const;
export type CertificateRole = (typeof CERTIFICATES)[number];

export interface Sample<L> {
  readonly labels: L;
  readonly value: number;
}

class CacheState {
  listed = false;
  lists = 0;
  /** ms since the epoch: the start, until the first sign of life. */
  lastActivityMs: number;
  constructor(now: number) {
    this.lastActivityMs = now;
  }
}

const isCache = (resource: string): resource is CacheResource =>
  (CACHE_RESOURCES as readonly string[]).includes(resource);

export class WebhookRecorder {
  /** Upper bounds of the admission duration buckets, in seconds: from 1 ms up to the API server's timeout. */
  readonly bounds: readonly number[];
  private readonly admissions = new Map<string, number>();
  private readonly slots: Record<AdmissionOutcomeName, Float64Array>;
  private readonly sums: Record<AdmissionOutcomeName, number> = { injected: 0, untouched: 0, error: 0 };
  private caches: Map<CacheResource, CacheState> | undefined;
  private readonly notAfter = new Map<CertificateRole, number>();
  private servingFingerprint: string | undefined;
  private rotations = 0;
  private repairs = 0;

  /**
   * `timeoutSeconds`: the timeoutSeconds of the MutatingWebhookConfiguration's entries (--admission-timeout);
   * `now`: ms since the epoch (tests move it).
   */
  constructor(
    readonly timeoutSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.bounds = durationBuckets(timeoutSeconds);
    for (const pair of OUTCOME_PAIRS) this.admissions.set(key(pair), 0);
    const slots = () => new Float64Array(this.bounds.length + 1);
    this.slots = { injected: slots(), untouched: slots(), error: slots() };
  }

  /** One admission answered (or refused with a 400), `seconds` after its first byte. */
  admission(outcome: AdmissionOutcome, seconds: number): void {
    const k = key(outcome);
    this.admissions.set(k, (this.admissions.get(k) ?? 0) + 1);
    const slots = this.slots[outcome.outcome];
    const slot = slotOf(this.bounds, seconds);
    slots[slot] = (slots[slot] ?? 0) + 1;
    this.sums[outcome.outcome] += seconds;
  }

  /** The webhook keeps the four collections (it has an API server): their series exist from now on. */
  watchingCaches(): void {
    const now = this.now();
    this.caches = new Map(CACHE_RESOURCES.map((resource) => [resource, new CacheState(now)]));
  }

  cacheActivity(resource: string, what: CacheActivity): void {
    const state = isCache(resource) ? this.caches?.get(resource) : undefined;
    if (state === undefined) return;
    state.lastActivityMs = this.now();
    if (what === 'listed') {
      state.listed = true;
      state.lists += 1;
    }
  }

  /** A serving certificate put in service: the first one, or a rotation (another fingerprint). */
  serving(fingerprint: string, notAfterMs: number): void {
    if (this.servingFingerprint !== undefined && this.servingFingerprint !== fingerprint) this.rotations += 1;
    this.servingFingerprint = fingerprint;
    this.notAfter.set('serving', notAfterMs);
  }

  /** The self-managed CA that signs the serving certificate now. */
  ca(notAfterMs: number): void {
    this.notAfter.set('ca', notAfterMs);
  }

  /** The caBundle of the MutatingWebhookConfiguration written because it did not hold the Secret's CAs. */
  caBundleRepaired(): void {
    this.repairs += 1;
  }

  // The read side, for exposition.ts at scrape time.

  admissionCounts(): Sample<{ outcome: string; reason: string }>[] {
    return OUTCOME_PAIRS.map((pair) => ({ labels: { ...pair }, value: this.admissions.get(key(pair)) ?? 0 }));
  }

  durations(): HistogramSample<{ outcome: AdmissionOutcomeName }>[] {
    return ADMISSION_OUTCOMES.map((outcome) => ({
      labels: { outcome },
      ...cumulativeOf(this.slots[outcome]),
      sumSeconds: this.sums[outcome],
    }));
  }

  /** Per collection: listed (1/0), seconds since its last sign of life, and lists after the first. */
  cacheStates(): { resource: CacheResource; synced: number; idleSeconds: number; relists: number }[] {
    const now = this.now();
    return [...(this.caches ?? [])].map(([resource, state]) => ({
      resource,
      synced: state.listed ? 1 : 0,
      idleSeconds: Math.max(0, (now - state.lastActivityMs) / 1000),
      relists: Math.max(0, state.lists - 1),
    }));
  }

  /** notAfter in seconds since the epoch, for the certificates known (the CA only when self-managed). */
  notAfterSeconds(): Sample<{ certificate: CertificateRole }>[] {
    return CERTIFICATES.flatMap((certificate) => {
      const ms = this.notAfter.get(certificate);
      return ms === undefined ? [] : [{ labels: { certificate }, value: ms / 1000 }];
    });
  }

  certificateRotations(): number {
    return this.rotations;
  }

  caBundleRepairs(): number {
    return this.repairs;
  }
}

const key = (o: AdmissionOutcome): string => `${o.outcome}/${o.reason}`;
