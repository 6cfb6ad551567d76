// The chart's monitoring objects are deploy/monitoring's, opt-in: none renders by default (so the defaults stay
// deploy/webhook's objects, parity.test.ts); each value turns on exactly its object, whose spec is the file's;
// the chart's copies of the rules and the dashboard are the files themselves.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../helpers/cli.js';
import { CHART, NAMESPACE, renderChart, skipWithoutHelm } from '../helpers/helm.js';
import type { Manifest } from '../helpers/kustomize.js';

const MONITORING = `${ROOT}deploy/monitoring`;
const file = (name: string) => readFileSync(`${MONITORING}/${name}`, 'utf8');
const KINDS = ['PodMonitor', 'ServiceMonitor', 'PrometheusRule', 'ConfigMap'];
const ALL = {
  monitoring: {
    podMonitor: { enabled: true },
    serviceMonitor: { enabled: true },
    prometheusRule: { enabled: true },
    dashboard: { enabled: true },
  },
};

describe("the chart's copies of deploy/monitoring's rules and dashboard", () => {
  it.each(['prometheusrule.yaml', 'dashboard.json'])('files/%s is deploy/monitoring/%s', (name) => {
    expect(readFileSync(`${CHART}/files/${name}`, 'utf8')).toBe(file(name));
  });
});

describe.skipIf(skipWithoutHelm('chart monitoring tests'))('charts/osm-healthcheck monitoring values', () => {
  const monitoringObjects = (objects: Manifest[]) => objects.filter((o) => KINDS.includes(o.kind));

  it('renders none of them by default', async () => {
    expect(monitoringObjects(await renderChart())).toEqual([]);
  });

  it.each([
    { key: 'podMonitor', kind: 'PodMonitor' },
    { key: 'serviceMonitor', kind: 'ServiceMonitor' },
    { key: 'prometheusRule', kind: 'PrometheusRule' },
    { key: 'dashboard', kind: 'ConfigMap' },
  ])('monitoring.$key.enabled renders the $kind alone', async ({ key, kind }) => {
    const objects = monitoringObjects(await renderChart({ monitoring: { [key]: { enabled: true } } }));
    expect(objects.map((o) => o.kind)).toEqual([kind]);
  });

  it.each([
    { kind: 'PodMonitor', name: 'podmonitor.yaml' },
    { kind: 'ServiceMonitor', name: 'servicemonitor.yaml' },
    { kind: 'PrometheusRule', name: 'prometheusrule.yaml' },
  ])('the $kind is deploy/monitoring/$name, in the release namespace', async ({ kind, name }) => {
    const rendered = (await renderChart(ALL)).find((o) => o.kind === kind) as Manifest;
    const written = parse(file(name)) as Manifest;
    expect(rendered.apiVersion).toBe(written.apiVersion);
    expect(rendered.metadata.name).toBe(written.metadata.name);
    expect(rendered.metadata.namespace).toBe(NAMESPACE);
    expect(rendered.spec).toEqual(written.spec);
  });

  it("the dashboard's ConfigMap carries dashboard.json as it is, with the sidecar's label", async () => {
    const map = (await renderChart(ALL)).find((o) => o.kind === 'ConfigMap') as Manifest;
    expect(map.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(map.data['osm-healthcheck.json']).toBe(file('dashboard.json').trimEnd());
    expect(JSON.parse(map.data['osm-healthcheck.json']).uid).toBe('osm-healthcheck');
  });

  it('labels, intervals and a runbook base go where they belong', async () => {
    const base = 'https://git.example.com/you/osm-healthcheck/blob/main/';
    const objects = await renderChart({
      monitoring: {
        podMonitor: { enabled: true, labels: { release: 'prom' }, interval: '15s' },
        serviceMonitor: { enabled: true, labels: { release: 'prom' }, interval: '1m' },
        prometheusRule: { enabled: true, labels: { release: 'prom' }, runbookBaseUrl: base },
      },
    });
    const find = (kind: string) => objects.find((o) => o.kind === kind) as Manifest;
    for (const kind of ['PodMonitor', 'ServiceMonitor', 'PrometheusRule']) {
      expect(find(kind).metadata.labels, kind).toMatchObject({ release: 'prom' });
    }
    expect(find('PodMonitor').spec.podMetricsEndpoints[0].interval).toBe('15s');
    expect(find('ServiceMonitor').spec.endpoints[0].interval).toBe('1m');
    const urls = find('PrometheusRule').spec.groups.flatMap((g: Manifest) =>
      g.rules.map((r: Manifest) => r.annotations.runbook_url),
    );
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url).toMatch(new RegExp(`^${base}docs/monitoring\\.md#[a-z]+$`));
  });

  it("another release namespace: the ServiceMonitor looks for the webhook's Service there", async () => {
    const objects = await renderChart(ALL, ['--namespace', 'mesh-system']);
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor') as Manifest;
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['mesh-system'] });
  });
});
