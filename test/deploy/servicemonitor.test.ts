// deploy/monitoring/servicemonitor.yaml scrapes what deploy/webhook really provides: the Service its selector
// matches, in the namespace it looks in, has the port it names, and that port reaches the container port the
// webhook serves /metrics on (its --metrics-port).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { METRICS_PATH } from '../../src/webhook/metrics/server.js';
import { ROOT } from '../helpers/cli.js';
import type { Manifest } from '../helpers/kustomize.js';
import { flag, matches, one } from '../webhook/deploy-manifests.js';

describe('deploy/monitoring/servicemonitor.yaml', () => {
  const monitor = parse(readFileSync(`${ROOT}deploy/monitoring/servicemonitor.yaml`, 'utf8')) as Manifest;
  const service = one('Service', 'osm-healthcheck-webhook');
  const deployment = one('Deployment', 'osm-healthcheck-webhook');
  const container = deployment.spec.template.spec.containers[0] as Manifest;

  it("selects the webhook's Service, in its namespace", () => {
    expect(monitor).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' });
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [service.metadata.namespace] });
    expect(matches(monitor.spec.selector, service.metadata.labels)).toBe(true);
  });

  it("scrapes /metrics in plain HTTP on the Service's port that reaches --metrics-port", () => {
    const [endpoint] = monitor.spec.endpoints as Manifest[];
    expect(endpoint).toMatchObject({ path: METRICS_PATH, scheme: 'http' });
    const port = (service.spec.ports as Manifest[]).find((p) => p.name === endpoint?.port);
    const target = (container.ports as Manifest[]).find((p) => p.name === port?.targetPort);
    expect(String(target?.containerPort)).toBe(flag(container.args, '--metrics-port'));
  });
});
