// deploy/monitoring/podmonitor.yaml scrapes what inject and serve really provide: the port name inject gives
// the companion's healthcheck port, and the path the metrics are served on.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PORT_NAMES } from '../../src/rewrite/companion.js';
import { ROOT } from '../helpers/cli.js';

describe('deploy/monitoring/podmonitor.yaml', () => {
  const monitor = parse(readFileSync(`${ROOT}deploy/monitoring/podmonitor.yaml`, 'utf8'));

  it('is a Prometheus Operator PodMonitor over every namespace', () => {
    expect(monitor).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      spec: { namespaceSelector: { any: true }, selector: {} },
    });
  });

  it("scrapes /metrics on the companion's healthcheck port, by the name inject gives it", () => {
    expect(monitor.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({
        port: PORT_NAMES.healthcheck,
        path: '/metrics',
        scheme: 'http',
        honorLabels: true,
      }),
    ]);
  });
});
