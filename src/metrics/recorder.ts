// What the companion counts for Prometheus, as plain numbers: probe runs, their durations and failure reasons, each
// entry's timeout and first success, the in-flight gate, header-driven checks, and a caller's load: answers that
// shared a check, connections evicted or cut. No prom-client here: loading it costs start-up and memory in every pod (docs/metrics.md),
// so registry.ts, loaded on the first scrape, reads these numbers then. Every series is made up front from the
// table and the fixed sets below, and callers pass table entries and enums, never label text: a hostile client
// cannot grow the series set. Recording is O(1) and allocates nothing, so the probe path does not pay for metrics.

import { FAILURE_REASONS, type FailureReason } from '../probe/failure-reason.js';
import type { Verdict } from '../probe/result.js';
import { LISTENER_ROLES, type ListenerRole, type ProbeKind } from '../scheme.js';
import { entries } from '../table/parse.js';
import type { ProbeEntry, ProbeHandler, ProbeTable } from '../table/types.js';
import { probeDurationBuckets } from './buckets.js';
import { cumulativeOf, type HistogramSample, slotOf } from './histogram.js';

/** A header-driven probe on /osm-healthcheck: `Original-Tcp-Port` runs a TCP connect, `Original-Http-Port` a GET. */
export type HeaderProbe = 'tcpSocket' | 'httpGet';

/** What became of a request on /osm-healthcheck. */
export const HEADER_CHECK_OUTCOMES = [
  /** `Original-Tcp-Port`: a TCP connect was run. */
  'tcp',
  /** `Original-Http-Port`: an HTTP GET was run. */
  'http',
  /** osm-edge's wrap of one of the companion's own probe paths: that path was served. */
  'unwrapped',
  /** Missing, repeated or malformed `Original-*` headers, or a wrap naming none of the probe paths: 400. */
  'invalid',
  /** 403: with a table, no table probe of that port (and path); without one, a port outside `--allowed-ports`. */
  'port_not_allowed',
] as const;
export type HeaderCheckOutcome = (typeof HEADER_CHECK_OUTCOMES)[number];

/** Why the companion cut a caller's connection before its answer (docs/security.md#under-load). */
export const CUT_REASONS = [
  /** Headers not complete within the header deadline, or a request not within its timeout. */
  'timeout',
  /** Bytes that are not an HTTP/1.1 request. */
  'malformed',
  /** Headers past their size limit (431). */
  'too_large',
  /** Closed as soon as accepted: its caller opened more connections a second than its rate (server/source-rate.ts). */
  'rate',
] as const;
export type CutReason = (typeof CUT_REASONS)[number];

/** Header-driven probes name a port, not a container: they are counted together per handler. */
export type ProbeLabels = {
  readonly kind: ProbeKind | 'healthcheck';
  /** The table's container; empty for header-driven probes. */
  readonly container: string;
  readonly handler: ProbeHandler['type'];
};

export interface Sample<L> {
  readonly labels: L;
  readonly value: number;
}

/** One probe series' durations: probes that took at most `bounds[i]` seconds, and all of them. */
export type DurationSample = HistogramSample<ProbeLabels>;

/** What a probe run came to, as the recorder needs it: a ProbeResult is one. */
export type RunOutcome =
  | { readonly verdict: 'success' | 'warning' }
  | { readonly verdict: 'failure'; readonly reason: FailureReason };

/** Each reason's slot in a series' failure counts. */
const REASON_SLOT = Object.fromEntries(FAILURE_REASONS.map((reason, i) => [reason, i])) as Record<
  FailureReason,
  number
>;

/** Counts per verdict, as fields: an increment allocates nothing. */
class Verdicts {
  success = 0;
  warning = 0;
  failure = 0;
}

class ProbeSeries {
  readonly runs = new Verdicts();
  /** Runs per duration slot, not cumulative: slot i holds (bounds[i-1], bounds[i]], the last one what is over. */
  readonly slots: Float64Array;
  sumSeconds = 0;
  /** Failures per reason, in FAILURE_REASONS' order. */
  readonly failures = new Float64Array(FAILURE_REASONS.length);
  /** When the first run began (performance.now()); NaN until then. */
  firstStartedMs = Number.NaN;
  /** Seconds from the first run's start to the end of the first success; NaN until then. */
  firstSuccessSeconds = Number.NaN;

  constructor(
    readonly labels: ProbeLabels,
    slots: number,
  ) {
    this.slots = new Float64Array(slots);
  }
}

/** Counts per key of a fixed set, made up front. */
function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

export class Recorder {
  /** Upper bounds of the duration buckets, in seconds: from 1 ms up to the table's longest timeout (buckets.ts). */
  readonly bounds: readonly number[];
  private readonly boundsArray: Float64Array;
  private readonly series: readonly ProbeSeries[];
  private readonly entrySeries: readonly ProbeSeries[];
  private readonly entryTimeouts: readonly Sample<ProbeLabels>[];
  private readonly byEntry: ReadonlyMap<ProbeEntry, ProbeSeries>;
  private readonly byHeaderProbe: Readonly<Record<HeaderProbe, ProbeSeries>>;
  private readonly refusals = zeroes(LISTENER_ROLES);
  private readonly running = zeroes(LISTENER_ROLES);
  private readonly headerChecks = zeroes(HEADER_CHECK_OUTCOMES);
  private readonly shared = zeroes(LISTENER_ROLES);
  private readonly atDeadline = zeroes(LISTENER_ROLES);
  private readonly evictions = zeroes(LISTENER_ROLES);
  private readonly cuts = Object.fromEntries(LISTENER_ROLES.map((l) => [l, zeroes(CUT_REASONS)])) as Record<
    ListenerRole,
    Record<CutReason, number>
  >;

  /** `table`: the probe table serve runs; undefined, header-driven probes only. */
  constructor(table: ProbeTable | undefined) {
    this.bounds = probeDurationBuckets(table);
    this.boundsArray = Float64Array.from(this.bounds);
    const make = (labels: ProbeLabels) => new ProbeSeries(labels, this.bounds.length + 1);
    const byEntry = new Map<ProbeEntry, ProbeSeries>();
    const timeouts: Sample<ProbeLabels>[] = [];
    for (const entry of table === undefined ? [] : entries(table)) {
      const labels = { kind: entry.kind, container: entry.container, handler: entry.handler.type };
      byEntry.set(entry, make(labels));
      timeouts.push({ labels, value: entry.timeoutSeconds });
    }
    this.entryTimeouts = timeouts;
    this.byEntry = byEntry;
    this.byHeaderProbe = {
      tcpSocket: make({ kind: 'healthcheck', container: '', handler: 'tcpSocket' }),
      httpGet: make({ kind: 'healthcheck', container: '', handler: 'httpGet' }),
    };
    this.entrySeries = [...byEntry.values()];
    this.series = [...this.entrySeries, this.byHeaderProbe.tcpSocket, this.byHeaderProbe.httpGet];
  }

  /**
   * One probe run: a table entry (throws for an entry that is not in the table the recorder was made for: a bug),
   * or a header-driven probe. It began at `startedMs` (performance.now()) and took the prober `seconds`.
   */
  probeRun(probe: ProbeEntry | HeaderProbe, outcome: RunOutcome, startedMs: number, seconds: number): void {
    const series = typeof probe === 'string' ? this.byHeaderProbe[probe] : this.byEntry.get(probe);
    if (series === undefined) {
      const name = typeof probe === 'string' ? probe : `${probe.kind}.${probe.container}`;
      throw new Error(`metrics: ${name} is not an entry of the probe table these metrics were made for`);
    }
    series.runs[outcome.verdict]++;
    if (outcome.verdict === 'failure') {
      const reason = REASON_SLOT[outcome.reason];
      series.failures[reason] = (series.failures[reason] ?? 0) + 1;
    }
    const slot = slotOf(this.boundsArray, seconds);
    series.slots[slot] = (series.slots[slot] ?? 0) + 1;
    series.sumSeconds += seconds;
    if (Number.isNaN(series.firstStartedMs)) series.firstStartedMs = startedMs;
    // kubelet counts a Warning as a success (probe.go), so it ends the wait for the first success too.
    if (outcome.verdict !== 'failure' && Number.isNaN(series.firstSuccessSeconds)) {
      series.firstSuccessSeconds = (startedMs - series.firstStartedMs) / 1000 + seconds;
    }
  }

  /** A probe refused at once because its listener already had its limit in flight. */
  gateRefused(listener: ListenerRole | undefined): void {
    // undefined: a connection no listener handed over (only tests make one); it has no listener to count under.
    if (listener !== undefined) this.refusals[listener]++;
  }

  /** A probe started (+1) or finished (-1) on a listener. */
  inFlight(listener: ListenerRole | undefined, delta: 1 | -1): void {
    if (listener !== undefined) this.running[listener] += delta;
  }

  headerCheck(outcome: HeaderCheckOutcome): void {
    this.headerChecks[outcome]++;
  }

  /** A request answered by a check another request began (server/shared-checks.ts). */
  sharedAnswer(listener: ListenerRole | undefined): void {
    if (listener !== undefined) this.shared[listener]++;
  }

  /**
   * A shared answer given at the request's deadline by the check running when it arrived, the next check not having
   * ended in time (server/shared-checks.ts); also counted by `sharedAnswer`.
   */
  deadlineAnswer(listener: ListenerRole | undefined): void {
    if (listener !== undefined) this.atDeadline[listener]++;
  }

  /** A connection closed to make room for a caller holding fewer (server/source-shares.ts). */
  connectionEvicted(listener: ListenerRole | undefined): void {
    if (listener !== undefined) this.evictions[listener]++;
  }

  /** A connection cut before its answer: too slow, not HTTP, or too large. */
  connectionCut(listener: ListenerRole | undefined, reason: CutReason): void {
    if (listener !== undefined) this.cuts[listener][reason]++;
  }

  // The read side, for registry.ts at scrape time: every series, made up front, so each exists (at 0) from the
  // first scrape on and rate() and absent() work at once.

  probeRuns(): Sample<ProbeLabels & { verdict: Verdict }>[] {
    return this.series.flatMap((s) =>
      (['success', 'warning', 'failure'] as const).map((verdict) => ({
        labels: { ...s.labels, verdict },
        value: s.runs[verdict],
      })),
    );
  }

  durations(): DurationSample[] {
    return this.series.map((s) => ({ labels: s.labels, ...cumulativeOf(s.slots), sumSeconds: s.sumSeconds }));
  }

  /** Every series' failures by reason, each reason present (at 0) from the start. */
  failures(): Sample<ProbeLabels & { reason: FailureReason }>[] {
    return this.series.flatMap((s) =>
      FAILURE_REASONS.map((reason, i) => ({ labels: { ...s.labels, reason }, value: s.failures[i] ?? 0 })),
    );
  }

  /** Each table entry's timeoutSeconds; header-driven probes have none. */
  timeouts(): readonly Sample<ProbeLabels>[] {
    return this.entryTimeouts;
  }

  /** Each table entry that has succeeded: seconds from its first run's start to its first success's end. */
  firstSuccesses(): Sample<ProbeLabels>[] {
    return this.entrySeries
      .filter((s) => !Number.isNaN(s.firstSuccessSeconds))
      .map((s) => ({ labels: s.labels, value: s.firstSuccessSeconds }));
  }

  refused(): Sample<{ listener: ListenerRole }>[] {
    return LISTENER_ROLES.map((listener) => ({ labels: { listener }, value: this.refusals[listener] }));
  }

  probesInFlight(): Sample<{ listener: ListenerRole }>[] {
    return LISTENER_ROLES.map((listener) => ({ labels: { listener }, value: this.running[listener] }));
  }

  sharedAnswers(): Sample<{ listener: ListenerRole }>[] {
    return LISTENER_ROLES.map((listener) => ({ labels: { listener }, value: this.shared[listener] }));
  }

  deadlineAnswers(): Sample<{ listener: ListenerRole }>[] {
    return LISTENER_ROLES.map((listener) => ({ labels: { listener }, value: this.atDeadline[listener] }));
  }

  connectionsEvicted(): Sample<{ listener: ListenerRole }>[] {
    return LISTENER_ROLES.map((listener) => ({ labels: { listener }, value: this.evictions[listener] }));
  }

  connectionsCut(): Sample<{ listener: ListenerRole; reason: CutReason }>[] {
    return LISTENER_ROLES.flatMap((listener) =>
      CUT_REASONS.map((reason) => ({ labels: { listener, reason }, value: this.cuts[listener][reason] })),
    );
  }

  headerCheckOutcomes(): Sample<{ outcome: HeaderCheckOutcome }>[] {
    return HEADER_CHECK_OUTCOMES.map((outcome) => ({
      labels: { outcome },
      value: this.headerChecks[outcome],
    }));
  }
}
