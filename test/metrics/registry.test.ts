// The metrics registry through its text output: which series exist from the start, what each recording moves,
// and that only table entries and fixed sets can become label values.

import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/registry.js';
import { parseProbeTable } from '../../src/table/parse.js';
import type { ProbeEntry } from '../../src/table/types.js';

const TABLE = parseProbeTable({
  liveness: { app: { httpGet: { port: 8080, path: '/live' }, timeoutSeconds: 3 } },
  readiness: { db: { tcpSocket: { port: 5432 } } },
  startup: { app: { grpc: { port: 9000 } } },
});

function entry(kind: 'liveness' | 'readiness' | 'startup', container: string): ProbeEntry {
  const found = TABLE[kind].get(container);
  if (found === undefined) throw new Error(`no ${kind}.${container} in the test table`);
  return found;
}

/** `name{a="b",...}` -> value, for every sample of the text exposition format. */
function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    found.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return found;
}

async function scraped(record: (m: ReturnType<typeof createMetrics>) => void = () => {}) {
  const metrics = createMetrics({ table: TABLE, version: '9.8.7' });
  record(metrics);
  return samples(await metrics.scrape());
}

describe('createMetrics', () => {
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
    expect([...s.keys()].some((k) => k.startsWith('process_cpu_seconds_total'))).toBe(true);
    expect([...s.keys()].some((k) => k.startsWith('nodejs_heap_size_used_bytes'))).toBe(true);
  });

  it('counts a run under its entry and verdict, and its duration in buckets up to the longest timeout', async () => {
    const s = await scraped((m) => {
      m.probeRun(entry('liveness', 'app'), 'success', 0.003);
      m.probeRun(entry('liveness', 'app'), 'warning', 0.02);
      m.probeRun(entry('readiness', 'db'), 'failure', 0.9);
      m.probeRun('tcpSocket', 'failure', 0.0005);
    });
    const app = 'kind="liveness",container="app",handler="httpGet"';
    expect(s.get(`osm_healthcheck_probes_total{${app},verdict="success"}`)).toBe(1);
    expect(s.get(`osm_healthcheck_probes_total{${app},verdict="warning"}`)).toBe(1);
    expect(s.get(`osm_healthcheck_probes_total{${app},verdict="failure"}`)).toBe(0);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_count{${app}}`)).toBe(2);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_sum{${app}}`)).toBeCloseTo(0.023);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_bucket{le="0.005",${app}}`)).toBe(1);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_bucket{le="0.025",${app}}`)).toBe(2);
    // The table's longest timeout is 3 s: the last finite bucket.
    const les = [...s.keys()]
      .filter((k) => k.startsWith('osm_healthcheck_probe_duration_seconds_bucket') && k.includes(app))
      .map((k) => /le="([^"]+)"/.exec(k)?.[1]);
    expect(les.slice(-3)).toEqual(['2.5', '3', '+Inf']);
    const db = 'kind="readiness",container="db",handler="tcpSocket"';
    expect(s.get(`osm_healthcheck_probes_total{${db},verdict="failure"}`)).toBe(1);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_bucket{le="0.5",${db}}`)).toBe(0);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_bucket{le="1",${db}}`)).toBe(1);
    const header = 'kind="healthcheck",container="",handler="tcpSocket"';
    expect(s.get(`osm_healthcheck_probes_total{${header},verdict="failure"}`)).toBe(1);
    expect(s.get(`osm_healthcheck_probe_duration_seconds_bucket{le="0.001",${header}}`)).toBe(1);
  });

  it('counts refusals and header checks, and follows probes in flight up and down per listener', async () => {
    const s = await scraped((m) => {
      m.gateRefused('healthcheck');
      m.gateRefused('healthcheck');
      m.headerCheck('invalid');
      m.headerCheck('tcp');
      m.inFlight('readiness', 1);
      m.inFlight('readiness', 1);
      m.inFlight('readiness', -1);
      m.inFlight('startup', 1);
      m.inFlight('startup', -1);
    });
    expect(s.get('osm_healthcheck_probes_refused_total{listener="healthcheck"}')).toBe(2);
    expect(s.get('osm_healthcheck_probes_refused_total{listener="liveness"}')).toBe(0);
    expect(s.get('osm_healthcheck_header_checks_total{outcome="invalid"}')).toBe(1);
    expect(s.get('osm_healthcheck_header_checks_total{outcome="tcp"}')).toBe(1);
    expect(s.get('osm_healthcheck_probes_in_flight{listener="readiness"}')).toBe(1);
    expect(s.get('osm_healthcheck_probes_in_flight{listener="startup"}')).toBe(0);
  });

  it('refuses an entry that is not one of its table, even one equal to an entry', () => {
    const metrics = createMetrics({ table: TABLE, version: '1.0.0' });
    const lookalike: ProbeEntry = { ...entry('readiness', 'db') };
    expect(() => metrics.probeRun(lookalike, 'success', 0.001)).toThrow(
      'metrics: readiness.db is not an entry of the probe table these metrics were made for',
    );
    const forged: ProbeEntry = { ...lookalike, container: 'from-a-request-path' };
    expect(() => metrics.probeRun(forged, 'success', 0.001)).toThrow(/from-a-request-path is not an entry/);
  });

  it('takes no free text where a label value goes', () => {
    const metrics = createMetrics({ table: undefined, version: '1.0.0' });
    const fromRequest: string = 'x-attacker';
    // @ts-expect-error a listener is a ListenerRole, never request text
    expect(() => metrics.gateRefused(fromRequest)).toThrow();
    // @ts-expect-error an outcome is one of HEADER_CHECK_OUTCOMES
    expect(() => metrics.headerCheck(fromRequest)).toThrow();
    // @ts-expect-error a probe is a table entry or a header-driven handler type
    expect(() => metrics.probeRun(fromRequest, 'success', 0.001)).toThrow();
  });

  it('serves the text exposition format', () => {
    expect(createMetrics({ table: undefined, version: '1.0.0' }).contentType).toBe(
      'text/plain; version=0.0.4; charset=utf-8',
    );
  });
});
