// What callers other than kubelet made a companion do, as analyze --probes reads it: from a real companion's
// /metrics (one read, --companion-metrics) and from Prometheus' answer (the instant query's series).

import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exposedCallerLoad } from '../../../src/analyze/probes/exposition.js';
import { instantQueries, samplesOf } from '../../../src/analyze/probes/promql.js';
import { httpApp, type Running } from '../../helpers/apps.js';
import { get, raw } from '../../helpers/client.js';
import { type Companion, startCompanion } from '../../helpers/companion.js';

describe("a companion's caller load", () => {
  let app: Running<Server>;
  let companion: Companion;
  beforeAll(async () => {
    app = await httpApp((_req, res) => setTimeout(() => res.end('ok'), 50));
    companion = await startCompanion({ table: { liveness: { app: { httpGet: { port: app.port } } } } });
  });
  afterAll(async () => {
    await companion?.close();
    await app?.close();
  });

  it('is 0 with kubelet alone, and counts the answers that shared a check and the connections cut', async () => {
    const metrics = async () => (await get(companion.url('healthcheck', '/metrics'))).body;
    expect(exposedCallerLoad(await metrics(), 'ns', 'web-1')).toEqual({
      namespace: 'ns',
      pod: 'web-1',
      requests: 0,
    });
    await Promise.all(
      Array.from({ length: 5 }, () => get(companion.url('liveness', '/osm-liveness-probe/app'))),
    );
    await raw(companion.ports.liveness, 'NOT HTTP\r\n\r\n');
    // Four of the five shared the first one's check; the bytes that are not HTTP were cut.
    expect(exposedCallerLoad(await metrics(), 'ns', 'web-1').requests).toBe(5);
  });
});

describe("Prometheus' caller load", () => {
  it("asks per pod over the window, and reads each answer as that pod's", () => {
    const query = instantQueries('3600s', ',namespace="ns"').callerLoad;
    expect(query).toContain('increase(osm_healthcheck_shared_answers_total{namespace="ns"}[3600s])');
    expect(query).toContain('osm_healthcheck_connections_evicted_total');
    const { callerLoad } = samplesOf({
      callerLoad: [
        { metric: { namespace: 'ns', pod: 'web-1' }, values: [[0, 4200]] },
        { metric: { namespace: 'ns' }, values: [[0, 1]] },
      ],
    });
    expect(callerLoad).toEqual([{ namespace: 'ns', pod: 'web-1', requests: 4200 }]);
  });
});
