// The recorder: plain numbers per series, made up front from the table and the fixed sets; what each recording
// moves; and that only table entries and fixed sets can become label values.

import { describe, expect, it } from 'vitest';
import {
  HEADER_CHECK_OUTCOMES,
  type HeaderProbe,
  Recorder,
  type RunOutcome,
} from '../../src/metrics/recorder.js';
import { FAILURE_REASONS } from '../../src/probe/failure-reason.js';
import type { Verdict } from '../../src/probe/result.js';
import type { ProbeEntry } from '../../src/table/types.js';
import { entry, TABLE } from './table.js';

const key = (labels: object) => JSON.stringify(labels);
const runs = (r: Recorder) => new Map(r.probeRuns().map((s) => [key(s.labels), s.value]));
const durations = (r: Recorder) => new Map(r.durations().map((s) => [key(s.labels), s]));
const failures = (r: Recorder) => new Map(r.failures().map((s) => [key(s.labels), s.value]));
const SUCCESS: RunOutcome = { verdict: 'success' };
const outcome = (verdict: Verdict): RunOutcome =>
  verdict === 'failure' ? { verdict, reason: 'timeout' } : { verdict };
const LIVE_APP = { kind: 'liveness', container: 'app', handler: 'httpGet' };

describe('Recorder', () => {
  it('has every series at 0 before anything is recorded: each entry and verdict, header probes, listeners, outcomes', () => {
    const r = new Recorder(TABLE);
    const series = [
      { kind: 'liveness', container: 'app', handler: 'httpGet' },
      { kind: 'readiness', container: 'db', handler: 'tcpSocket' },
      { kind: 'startup', container: 'app', handler: 'grpc' },
      { kind: 'healthcheck', container: '', handler: 'tcpSocket' },
      { kind: 'healthcheck', container: '', handler: 'httpGet' },
    ];
    expect(r.probeRuns()).toEqual(
      series.flatMap((labels) =>
        ['success', 'warning', 'failure'].map((verdict) => ({ labels: { ...labels, verdict }, value: 0 })),
      ),
    );
    expect(r.durations()).toEqual(
      series.map((labels) => ({
        labels,
        cumulative: r.bounds.map(() => 0),
        count: 0,
        sumSeconds: 0,
      })),
    );
    expect(r.failures()).toEqual(
      series.flatMap((labels) =>
        FAILURE_REASONS.map((reason) => ({ labels: { ...labels, reason }, value: 0 })),
      ),
    );
    // Timeouts are the table's entries' own (test/metrics/table.ts); header-driven probes have none.
    expect(r.timeouts()).toEqual([
      { labels: series[0], value: 3 },
      { labels: series[1], value: 1 },
      { labels: series[2], value: 1 },
    ]);
    expect(r.firstSuccesses()).toEqual([]);
    const listeners = ['liveness', 'readiness', 'startup', 'healthcheck'];
    expect(r.refused()).toEqual(listeners.map((listener) => ({ labels: { listener }, value: 0 })));
    expect(r.probesInFlight()).toEqual(listeners.map((listener) => ({ labels: { listener }, value: 0 })));
    expect(r.headerCheckOutcomes()).toEqual(
      HEADER_CHECK_OUTCOMES.map((outcome) => ({ labels: { outcome }, value: 0 })),
    );
  });

  it.each([
    { name: 'no table: header-driven probes only, 1 s', table: undefined, last: 1 },
    { name: "the table's longest timeout, 3 s", table: TABLE, last: 3 },
  ])('has buckets from 1 ms up to $name', ({ table, last }) => {
    const r = new Recorder(table);
    expect(r.bounds[0]).toBe(0.001);
    expect(r.bounds.at(-1)).toBe(last);
  });

  it.each([
    { name: 'under the first bound', seconds: 0.0004, le: 0.001 },
    { name: 'exactly on a bound: that bucket (le is "at most")', seconds: 0.005, le: 0.005 },
    { name: 'just over a bound: the next', seconds: 0.0050001, le: 0.01 },
    { name: 'exactly the longest timeout', seconds: 3, le: 3 },
    { name: 'over the longest timeout: only +Inf', seconds: 3.2, le: Number.POSITIVE_INFINITY },
  ])('puts a duration $name in its bucket, and every bucket above', ({ seconds, le }) => {
    const r = new Recorder(TABLE);
    r.probeRun(entry('liveness', 'app'), SUCCESS, 0, seconds);
    const s = durations(r).get(key({ kind: 'liveness', container: 'app', handler: 'httpGet' }));
    expect(s?.cumulative).toEqual(r.bounds.map((bound) => (bound >= le ? 1 : 0)));
    expect(s?.count).toBe(1);
    expect(s?.sumSeconds).toBe(seconds);
  });

  it.each<{ name: string; probe: () => ProbeEntry | HeaderProbe; labels: object }>([
    {
      name: 'a table entry',
      probe: () => entry('readiness', 'db'),
      labels: { kind: 'readiness', container: 'db', handler: 'tcpSocket' },
    },
    {
      name: 'a header-driven TCP connect',
      probe: () => 'tcpSocket',
      labels: { kind: 'healthcheck', container: '', handler: 'tcpSocket' },
    },
    {
      name: 'a header-driven GET',
      probe: () => 'httpGet',
      labels: { kind: 'healthcheck', container: '', handler: 'httpGet' },
    },
  ])('counts runs of $name by verdict, with their durations summed', ({ probe, labels }) => {
    const r = new Recorder(TABLE);
    const verdicts: Verdict[] = ['success', 'failure', 'failure', 'warning'];
    for (const verdict of verdicts) r.probeRun(probe(), outcome(verdict), 0, 0.25);
    const counted = runs(r);
    expect(counted.get(key({ ...labels, verdict: 'success' }))).toBe(1);
    expect(counted.get(key({ ...labels, verdict: 'warning' }))).toBe(1);
    expect(counted.get(key({ ...labels, verdict: 'failure' }))).toBe(2);
    expect(durations(r).get(key(labels))).toMatchObject({ count: 4, sumSeconds: 1 });
    // Every other series is untouched.
    const total = [...counted.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(4);
  });

  it.each(FAILURE_REASONS)('counts a failure under its reason, %s, and under no other', (reason) => {
    const r = new Recorder(TABLE);
    r.probeRun(entry('liveness', 'app'), { verdict: 'failure', reason }, 0, 0.1);
    r.probeRun('httpGet', { verdict: 'failure', reason }, 0, 0.1);
    const counted = failures(r);
    expect(counted.get(key({ ...LIVE_APP, reason }))).toBe(1);
    expect(counted.get(key({ kind: 'healthcheck', container: '', handler: 'httpGet', reason }))).toBe(1);
    expect([...counted.values()].reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('counts no failure reason for a success or a warning', () => {
    const r = new Recorder(TABLE);
    r.probeRun(entry('liveness', 'app'), SUCCESS, 0, 0.1);
    r.probeRun(entry('liveness', 'app'), { verdict: 'warning' }, 0, 0.1);
    expect(r.failures().every((s) => s.value === 0)).toBe(true);
  });

  it("times an entry's first success from its first run's start, once, and no other entry's", () => {
    const r = new Recorder(TABLE);
    const live = entry('liveness', 'app');
    r.probeRun(live, { verdict: 'failure', reason: 'refused' }, 10_000, 0.002);
    r.probeRun(live, { verdict: 'failure', reason: 'timeout' }, 11_000, 0.9);
    expect(r.firstSuccesses()).toEqual([]);
    r.probeRun(live, SUCCESS, 12_000, 0.25);
    // 12 s after the first run began, plus the 0.25 s the successful run took.
    expect(r.firstSuccesses()).toEqual([{ labels: LIVE_APP, value: 2.25 }]);
    r.probeRun(live, SUCCESS, 20_000, 0.001);
    expect(r.firstSuccesses()).toEqual([{ labels: LIVE_APP, value: 2.25 }]);
    // A header-driven probe is no table entry: it has no first success to report.
    r.probeRun('tcpSocket', SUCCESS, 0, 0.001);
    expect(r.firstSuccesses()).toHaveLength(1);
  });

  it("counts a warning as kubelet does: a success, so it ends an entry's wait for its first", () => {
    const r = new Recorder(TABLE);
    r.probeRun(entry('readiness', 'db'), { verdict: 'warning' }, 500, 0.5);
    expect(r.firstSuccesses()).toEqual([
      { labels: { kind: 'readiness', container: 'db', handler: 'tcpSocket' }, value: 0.5 },
    ]);
  });

  it('counts refusals and header checks, and follows probes in flight up and down per listener', () => {
    const r = new Recorder(undefined);
    r.gateRefused('healthcheck');
    r.gateRefused('healthcheck');
    r.headerCheck('invalid');
    r.headerCheck('tcp');
    r.inFlight('readiness', 1);
    r.inFlight('readiness', 1);
    r.inFlight('readiness', -1);
    r.inFlight('startup', 1);
    r.inFlight('startup', -1);
    const value = <L extends object>(samples: { labels: L; value: number }[], labels: L) =>
      samples.find((s) => key(s.labels) === key(labels))?.value;
    expect(value(r.refused(), { listener: 'healthcheck' })).toBe(2);
    expect(value(r.refused(), { listener: 'liveness' })).toBe(0);
    expect(value(r.headerCheckOutcomes(), { outcome: 'invalid' })).toBe(1);
    expect(value(r.headerCheckOutcomes(), { outcome: 'tcp' })).toBe(1);
    expect(value(r.headerCheckOutcomes(), { outcome: 'http' })).toBe(0);
    expect(value(r.probesInFlight(), { listener: 'readiness' })).toBe(1);
    expect(value(r.probesInFlight(), { listener: 'startup' })).toBe(0);
  });

  it('counts nothing for a connection no listener handed over', () => {
    const r = new Recorder(undefined);
    r.gateRefused(undefined);
    r.inFlight(undefined, 1);
    expect([...r.refused(), ...r.probesInFlight()].every((s) => s.value === 0)).toBe(true);
  });

  it('refuses an entry that is not one of its table, even one equal to an entry', () => {
    const r = new Recorder(TABLE);
    const lookalike: ProbeEntry = { ...entry('readiness', 'db') };
    expect(() => r.probeRun(lookalike, SUCCESS, 0, 0.001)).toThrow(
      'metrics: readiness.db is not an entry of the probe table these metrics were made for',
    );
    const forged: ProbeEntry = { ...lookalike, container: 'from-a-request-path' };
    expect(() => r.probeRun(forged, SUCCESS, 0, 0.001)).toThrow(/from-a-request-path is not an entry/);
  });

  it('takes no free text where a label value goes', () => {
    const r = new Recorder(undefined);
    const fromRequest: string = 'x-attacker';
    // @ts-expect-error a listener is a ListenerRole, never request text
    r.gateRefused(fromRequest);
    // @ts-expect-error an outcome is one of HEADER_CHECK_OUTCOMES
    r.headerCheck(fromRequest);
    // @ts-expect-error a probe is a table entry or a header-driven handler type
    expect(() => r.probeRun(fromRequest, SUCCESS, 0, 0.001)).toThrow();
    // Should a cast smuggle text in anyway, it names no series that exists: the sets stay as they were made.
    expect(r.refused().map((s) => s.labels.listener)).toEqual([
      'liveness',
      'readiness',
      'startup',
      'healthcheck',
    ]);
    expect(r.headerCheckOutcomes().map((s) => s.labels.outcome)).toEqual([...HEADER_CHECK_OUTCOMES]);
  });

  it('records every run of a long series of probes, each in flight and done', () => {
    // How fast it records is the benchmark's to judge (npm run bench -- --recorder), as a ratio to a floor.
    const r = new Recorder(TABLE);
    const live = entry('liveness', 'app');
    const n = 200_000;
    for (let i = 0; i < n; i++) {
      r.inFlight('liveness', 1);
      r.probeRun(
        live,
        i % 7 === 0 ? { verdict: 'failure', reason: 'status' } : SUCCESS,
        i,
        (i % 3000) / 1000,
      );
      r.inFlight('liveness', -1);
    }
    expect(durations(r).get(key({ kind: 'liveness', container: 'app', handler: 'httpGet' }))?.count).toBe(n);
    expect(runs(r).get(key({ ...LIVE_APP, verdict: 'success' }))).toBe(n - Math.ceil(n / 7));
    expect(failures(r).get(key({ ...LIVE_APP, reason: 'status' }))).toBe(Math.ceil(n / 7));
    expect(r.probesInFlight().find((s) => s.labels.listener === 'liveness')?.value).toBe(0);
  });
});
