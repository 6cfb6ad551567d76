// The exposition through its text output: prom-client writes what the recorder holds at scrape time, every series
// from the first scrape on, histogram buckets, sum and count exact; and the lazy loader makes it once.

import { describe, expect, it } from 'vitest';
import { lazyExposition } from '../../src/metrics/load-exposition.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { createExposition } from '../../src/metrics/registry.js';
import { FAILURE_REASONS } from '../../src/probe/failure-reason.js';
import { samples } from '../helpers/exposition.js';
import { entry, TABLE } from './table.js';

async function scraped(record: (r: Recorder) => void = () => {}) {
  const recorder = new Recorder(TABLE);
  const exposition = createExposition(recorder, { version: '9.8.7', restarts: 0 });
  record(recorder);
  return samples(await exposition.metrics());
}

const APP = 'kind="liveness",container="app",handler="httpGet"';

describe('createExposition', () => {
  it('has every series at 0 from the first scrape: each entry and verdict, header probes, listeners, outcomes', async () => {
    const s = await scraped();
    for (const [kind, container, handler] of [
      ['liveness', 'app', 'httpGet'],
      ['readiness', 'db', 'tcpSocket'],
      ['startup', 'app', 'grpc'],
      ['healthcheck', '', 'tcpSocket'],
      ['healthcheck', '', 'httpGet'],
    ]) {
      const labels = `kind="${kind}",container="${container}",handler="${handler}"`;
      for (const verdict of ['success', 'warning', 'failure']) {
        expect(s.get(`osm_healthcheck_probes_total{${labels},verdict="${verdict}"}`)).toBe(0);
      }
      expect(s.get(`osm_healthcheck_probe_duration_seconds_count{${labels}}`)).toBe(0);
      expect(s.get(`osm_healthcheck_probe_duration_seconds_bucket{${labels},le="+Inf"}`)).toBe(0);
      for (const reason of FAILURE_REASONS) {
        expect(s.get(`osm_healthcheck_probe_failures_total{${labels},reason="${reason}"}`)).toBe(0);
      }
      // Nothing has succeeded yet; header-driven probes have neither gauge at all.
      expect(s.has(`osm_healthcheck_probe_first_success_seconds{${labels}}`)).toBe(false);
      expect(s.get(`osm_healthcheck_probe_timeout_seconds{${labels}}`)).toBe(
        kind === 'healthcheck' ? undefined : kind === 'liveness' ? 3 : 1,
      );
    }
    for (const listener of ['liveness', 'readiness', 'startup', 'healthcheck']) {
      expect(s.get(`osm_healthcheck_probes_refused_total{listener="${listener}"}`)).toBe(0);
      expect(s.get(`osm_healthcheck_probes_in_flight{listener="${listener}"}`)).toBe(0);
    }
    for (const outcome of ['tcp', 'http', 'unwrapped', 'invalid', 'port_not_allowed']) {
      expect(s.get(`osm_healthcheck_header_checks_total{outcome="${outcome}"}`)).toBe(0);
    }
    expect(s.get(`osm_healthcheck_build_info{version="9.8.7",node_version="${process.versions.node}"}`)).toBe(
      1,
    );
    expect(s.get('osm_healthcheck_restarts_total')).toBe(0);
    expect([...s.keys()].some((k) => k.startsWith('nodejs_heap_size_used_bytes'))).toBe(true);
  });

  it("counts the supervisor's restarts of serve it was told at start", async () => {
    const exposition = createExposition(new Recorder(TABLE), { version: '1.0.0', restarts: 3 });
    expect(samples(await exposition.metrics()).get('osm_healthcheck_restarts_total')).toBe(3);
  });

  it("writes the recorder's histogram exactly: buckets up to the longest timeout, then +Inf, sum and count", async () => {
    const s = await scraped((r) => {
      r.probeRun(entry('liveness', 'app'), { verdict: 'success' }, 0, 0.003);
      r.probeRun(entry('liveness', 'app'), { verdict: 'warning' }, 0, 0.02);
      r.probeRun(entry('liveness', 'app'), { verdict: 'failure', reason: 'status' }, 0, 0.1);
      r.probeRun(entry('liveness', 'app'), { verdict: 'failure', reason: 'timeout' }, 0, 7);
    });
    const buckets = [...s].filter(([k]) =>
      k.startsWith(`osm_healthcheck_probe_duration_seconds_bucket{${APP}`),
    );
    expect(buckets.map(([k, v]) => [/le="([^"]+)"/.exec(k)?.[1], v])).toEqual([
      ['0.001', 0],
      ['0.0025', 0],
      ['0.005', 1],
      ['0.01', 1],
      ['0.025', 2],
      ['0.05', 2],
      ['0.1', 3],
      ['0.25', 3],
      ['0.5', 3],
      ['0.8', 3],
      ['0.9', 3],
      ['1', 3],
      ['1.5', 3],
      ['2.4', 3],
      ['2.5', 3],
      ['2.7', 3],
      ['3', 3],
      ['+Inf', 4],
    ]);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_count{${APP}}`)).toBe(4);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_sum{${APP}}`)).toBe(0.003 + 0.02 + 0.1 + 7);
    expect(s.get(`osm_healthcheck_probes_total{${APP},verdict="failure"}`)).toBe(2);
    expect(s.get(`osm_healthcheck_probe_failures_total{${APP},reason="status"}`)).toBe(1);
    expect(s.get(`osm_healthcheck_probe_failures_total{${APP},reason="timeout"}`)).toBe(1);
    expect(s.get(`osm_healthcheck_probe_first_success_seconds{${APP}}`)).toBe(0.003);
  });

  it('reads the recorder at each scrape, counters and gauges alike', async () => {
    const recorder = new Recorder(TABLE);
    const exposition = createExposition(recorder, { version: '1.0.0', restarts: 0 });
    recorder.gateRefused('startup');
    recorder.inFlight('readiness', 1);
    let s = samples(await exposition.metrics());
    expect(s.get('osm_healthcheck_probes_refused_total{listener="startup"}')).toBe(1);
    expect(s.get('osm_healthcheck_probes_in_flight{listener="readiness"}')).toBe(1);
    recorder.gateRefused('startup');
    recorder.inFlight('readiness', -1);
    recorder.headerCheck('unwrapped');
    s = samples(await exposition.metrics());
    expect(s.get('osm_healthcheck_probes_refused_total{listener="startup"}')).toBe(2);
    expect(s.get('osm_healthcheck_probes_in_flight{listener="readiness"}')).toBe(0);
    expect(s.get('osm_healthcheck_header_checks_total{outcome="unwrapped"}')).toBe(1);
  });

  it('counts CPU since the process started, not since the exposition was made', async () => {
    const before = process.cpuUsage();
    const s = await scraped();
    expect(s.get('process_cpu_seconds_total')).toBeGreaterThanOrEqual((before.user + before.system) / 1e6);
    expect(s.get('process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(before.user / 1e6);
  });

  it('serves the text exposition format', () => {
    expect(createExposition(new Recorder(undefined), { version: '1.0.0', restarts: 0 }).contentType).toBe(
      'text/plain; version=0.0.4; charset=utf-8',
    );
  });
});

describe('lazyExposition', () => {
  it('makes one exposition, however many scrapes ask for it at once', async () => {
    const load = lazyExposition(new Recorder(undefined), { version: '1.0.0', restarts: 0 });
    const loaded = await Promise.all(Array.from({ length: 5 }, () => load()));
    expect(new Set(loaded).size).toBe(1);
    expect(await load()).toBe(loaded[0]);
  });
});
