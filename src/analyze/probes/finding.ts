// A probe finding: what analyze --probes says of one probe of one workload, the evidence with its numbers, and the
// fix as a change of fields (fix.ts turns it into a `kubectl patch` or a YAML snippet). Rule IDs are stable: scripts
// and docs/analyze.md#probe-rules key on them.

import type { ProbeKind } from '../../scheme.js';

export const STATIC_RULES = [
  'liveness-not-after-readiness',
  'liveness-without-readiness',
  'startup-in-initial-delay',
  'liveness-budget-short',
  'exec-probe',
] as const;
export const LIVE_RULES = [
  'near-timeout',
  'liveness-restarts',
  'startup-budget',
  'shared-dependency',
  'caller-load',
] as const;
export type RuleId = (typeof STATIC_RULES)[number] | (typeof LIVE_RULES)[number];

/** The fields to set on one container's probes (`null` removes a field: a handler replaced by another). */
export type ProbeChange = Partial<Record<`${ProbeKind}Probe`, Record<string, unknown>>>;

export interface Finding {
  rule: RuleId;
  container: string;
  kind: ProbeKind;
  /** What was seen, with its numbers (and, for a live rule, how many samples). */
  evidence: string;
  /** The change that clears it; undefined where no value can be given (an exec probe: the check is the app's). */
  change: ProbeChange | undefined;
  /** The fix in words, beside the patch. */
  advice: string;
  /** A liveness probe that restarted pods within the window: analyze exits 1 for it. */
  needsAction: boolean;
}
