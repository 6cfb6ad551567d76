// The companion OOM-killed (issue 27): the companion as the image runs it (image/supervise.sh and serve) in a
// memory cgroup the test makes as kubelet makes a container's (a limit; on cgroup v2 memory.oom.group=1, so a
// kernel OOM kill takes the whole container as kubelet's does), then a burst of slow probes, as many in flight as
// serve admits, on the readiness, startup and healthcheck ports against an app endpoint that never answers, while
// the app's liveness endpoint (its probe healthy) is probed every ~20 ms. serve must die of memory (V8's own heap
// limit, which the supervisor sets from the cgroup's, or the kernel's OOM killer) and be back, relaying the app's
// verdict, within a bound, with fewer app-liveness failures than kubelet's default threshold at its default period.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cgroupTree } from '../../bench/cgroup-tree.mjs';
import { httpApp, type Running } from '../helpers/apps.js';
import {
  appLivenessUrl,
  freePorts,
  killGroup,
  type Line,
  type Probed,
  probe,
  type Supervised,
  sampler,
  superviseServe,
} from '../helpers/supervised.js';
import { root, skipWithout } from '../helpers/system-tools.js';
import { outages, worstConsecutiveFailures } from './outage.js';

const MiB = 2 ** 20;
/**
 * Below the issue's 48Mi (by annotation), which this burst no longer fills: with V8's heap capped at half the
 * limit (image/supervise.sh) serve's working set stays near 34 MiB there. At 32 MiB it does not fit.
 */
const LIMIT = 32 * MiB;
const IN_FLIGHT = 256 + 8;
const BURST_MS = 15_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(
  skipWithout('test/e2e/companion-oom.test.ts', [root('a memory cgroup with a limit, as kubelet makes')]),
)('the companion OOM-killed, the app is fine', () => {
  let app: Running<import('node:http').Server>;
  let tree: ReturnType<typeof cgroupTree>['tree'];
  let companion: Supervised | undefined;

  beforeAll(async () => {
    // /live answers, /slow never does: each slow probe holds its sockets for its whole timeout.
    app = await httpApp((req, res) => {
      if (req.url === '/live') res.end('alive');
    });
    const made = cgroupTree('osm-hc-test-oom');
    if (made.tree === undefined) throw new Error(made.reason);
    tree = made.tree;
  });
  afterAll(async () => {
    if (companion !== undefined) await killGroup(companion);
    await app.close();
    tree?.remove();
  });

  it("serve dies of memory under a burst of slow probes, alone, is back within the app's liveness period, and the app sees under 3 failures", async () => {
    const cg = tree?.child('companion', { memoryMax: LIMIT, oomGroup: true });
    if (cg === undefined) throw new Error('no cgroup tree');
    const ports = await freePorts(4);
    const slow = { httpGet: { port: app.port, path: '/slow' }, timeoutSeconds: 10 };
    // One check at a time per probe (src/server/shared-checks.ts): a burst of requests for one probe is one check.
    // So the burst needs as many probes as checks in flight: IN_FLIGHT slow entries per kind, one request each at a
    // time, from this one address with the per-caller rate off (it would shed them: docs/security.md#under-load).
    const slowEntries = Object.fromEntries(Array.from({ length: IN_FLIGHT }, (_, i) => [`c${i}`, slow]));
    const table = {
      liveness: { app: { httpGet: { port: app.port, path: '/live' } } },
      readiness: slowEntries,
      startup: slowEntries,
    };
    const c = superviseServe(ports, table, (argv) => cg.wrap(argv), { OSM_HEALTHCHECK_CALLER_RATE: '0' });
    companion = c;
    await c.waitFor((l: Line) => l.msg === 'serving', 10_000);
    const watch = sampler(appLivenessUrl(ports), 1_000, 20);

    const until = performance.now() + BURST_MS;
    const burst = Array.from({ length: IN_FLIGHT }, (_, i) => [
      `http://127.0.0.1:${ports[1]}/osm-readiness-probe/c${i}`,
      `http://127.0.0.1:${ports[2]}/osm-startup-probe/c${i}`,
    ])
      .flat()
      .map(async (url) => {
        while (performance.now() < until && !c.lines.some((l) => l.msg === 'serve exited: restarting it')) {
          await probe(url, 12_000);
        }
      });
    const died = await c.waitFor((l: Line) => l.msg === 'serve exited: restarting it', BURST_MS + 5_000);
    const diedAt = performance.now();
    await c.waitFor((l: Line) => l.msg === 'serving' && l.restarts === 1, 10_000);
    const backMs = performance.now() - diedAt;
    await Promise.all(burst);
    await sleep(1_000);
    const samples: Probed[] = await watch.stop();

    const points = samples.map((p) => ({
      at: p.at,
      ok: p.status === 200 && p.detail.startsWith('liveness app:'),
    }));
    const spans = outages(points);
    const worst = worstConsecutiveFailures(points, 10_000);
    console.info(
      `OOM (${LIMIT / MiB} MiB, cgroup v${tree?.version}): serve ${JSON.stringify(died)}; kernel OOM kills ${cg.oomKills()}; ` +
        `outages ${spans.map((s) => Math.round(s.to - s.from)).join(', ')} ms; worst run at period 10 s: ${worst}; ` +
        `serving again ${Math.round(backMs)} ms after the restart line`,
    );
    // The supervisor lived through it: the container was not restarted, serve was.
    expect(c.child.exitCode).toBeNull();
    expect(['ABRT', 'KILL', 'TRAP']).toContain(died.signal);
    // Shorter than the app's 10 s liveness period, an outage fails one probe at most (ours take ~0.2 s).
    for (const span of spans) expect(span.to - span.from).toBeLessThan(10_000);
    expect(worst).toBeLessThan(3);
    expect(points.at(-1)?.ok).toBe(true);
  }, 60_000);
});
