// Histogram buckets for probe durations, derived from the probe table: from 1 ms up to the longest timeout, on
// Prometheus' usual 1-2.5-5 steps, so a fast probe and one that ran into its timeout land in different buckets;
// and for each table timeout T, 0.5T, 0.8T and 0.9T, so "p99 near the timeout" is measurable for every probe.

import { entries } from '../table/parse.js';
import type { ProbeTable } from '../table/types.js';

/** Header-driven probes without a table get 1 s (server/header-probes.ts), kubelet's default. */
const DEFAULT_TIMEOUT_SECONDS = 1;
const STEPS = [1, 2.5, 5] as const;
/** The fractions of each table timeout that are bounds (docs/metrics.md#probe-durations). */
export const TIMEOUT_FRACTIONS = [0.5, 0.8, 0.9] as const;

/** 0.001, 0.0025, 0.005, 0.01, ... up to and including `maxSeconds`. */
export function durationBuckets(maxSeconds: number): number[] {
  const buckets: number[] = [];
  for (let exponent = -3; ; exponent++) {
    for (const step of STEPS) {
      // Through a decimal string, so 2.5e-3 is 0.0025 and not 0.0025000000000000005.
      const bound = Number(`${step}e${exponent}`);
      if (bound >= maxSeconds) {
        buckets.push(maxSeconds);
        return buckets;
      }
      buckets.push(bound);
    }
  }
}

/** The probe duration bounds of this table: the steps up to its longest timeout, and its timeouts' fractions. */
export function probeDurationBuckets(table: ProbeTable | undefined): number[] {
  const timeouts = table === undefined ? [] : entries(table).map((e) => e.timeoutSeconds);
  // 12 significant digits, so 0.8 * 3 is 2.4 and not 2.4000000000000004, as the steps are.
  const near = timeouts.flatMap((t) => TIMEOUT_FRACTIONS.map((f) => Number((f * t).toPrecision(12))));
  const bounds = new Set([...durationBuckets(longestTimeoutSeconds(table)), ...near]);
  return [...bounds].sort((a, b) => a - b);
}

/** The longest timeout any probe of this table may take, in seconds. */
export function longestTimeoutSeconds(table: ProbeTable | undefined): number {
  const timeouts = table === undefined ? [] : entries(table).map((e) => e.timeoutSeconds);
  return Math.max(DEFAULT_TIMEOUT_SECONDS, ...timeouts);
}
