// GET /metrics on the companion, over real sockets: on the healthcheck listener only, prom-client's text with its
// content type, and what the routes record (probes in flight, gate refusals, shared and deadline answers, header
// checks) as it happens.

import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApp } from '../helpers/apps.js';
import { get } from '../helpers/client.js';
import { type Companion, startCompanion } from '../helpers/companion.js';
import { pastFreshWindow } from '../helpers/next-check.js';

/** `name{labels}` -> value for the companion's own series in a scrape. */
function series(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('osm_healthcheck_')) continue;
    const cut = line.lastIndexOf(' ');
    found.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return found;
}

/** An app that holds each request until `release()`; `arrived(n)` resolves once n requests are held. */
async function holdingApp() {
  const held: ServerResponse[] = [];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const app = await httpApp((_req, res) => {
    held.push(res);
    for (const w of waiting.filter((w) => held.length >= w.n)) w.resolve();
  });
  return {
    app,
    arrived: (n: number) =>
      new Promise<void>((resolve) => {
        if (held.length >= n) resolve();
        else waiting.push({ n, resolve });
      }),
    release: () => {
      for (const res of held.splice(0)) res.end('ok');
    },
  };
}

describe('GET /metrics', () => {
  let holding: Awaited<ReturnType<typeof holdingApp>>;
  let companion: Companion;
  const scrape = async () => {
    const answer = await get(companion.url('healthcheck', '/metrics'));
    expect(answer.status).toBe(200);
    return series(answer.body);
  };

  beforeAll(async () => {
    holding = await holdingApp();
    companion = await startCompanion({
      table: {
        liveness: {
          app: { httpGet: { port: holding.app.port }, timeoutSeconds: 5 },
          b: { httpGet: { port: holding.app.port }, timeoutSeconds: 5 },
          c: { httpGet: { port: holding.app.port }, timeoutSeconds: 5 },
        },
        // The TCP header check below runs this entry: a header names only the table's own probes.
        readiness: { app: { tcpSocket: { port: holding.app.port } } },
      },
      maxProbesPerListener: 2,
    });
  });

  afterAll(async () => {
    holding?.release();
    await companion?.close();
    await holding?.app.close();
  });

  it("answers prom-client's text format on the healthcheck port, also to HEAD", async () => {
    const answer = await get(companion.url('healthcheck', '/metrics'));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(answer.body).toMatch(/^# HELP /);
    expect(answer.body).toContain('# TYPE osm_healthcheck_probe_duration_seconds histogram');
    const head = await get(companion.url('healthcheck', '/metrics'), {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it.each(['liveness', 'readiness', 'startup'] as const)(
    'is not served on the %s port: 404',
    async (role) => {
      const answer = await get(companion.url(role, '/metrics'));
      expect(answer.status).toBe(404);
      expect(answer.body).not.toContain('paths: /metrics');
    },
  );

  it('lists /metrics among the healthcheck port paths, and refuses other methods with 405', async () => {
    expect((await get(companion.url('healthcheck', '/nope'))).body).toMatch(/paths: .*\/metrics\n$/);
    const post = await get(companion.url('healthcheck', '/metrics'), {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('shows checks in flight while they run, answers that shared one, refusals past the gate, and each check once it ends', async () => {
    const probe = (container: string) => get(companion.url('liveness', `/osm-liveness-probe/${container}`));
    const count = (m: Map<string, number>, key: string) => m.get(key) ?? 0;
    const runs = (c: string) =>
      `osm_healthcheck_probes_total{kind="liveness",container="${c}",handler="httpGet",verdict="success"}`;
    const shared = 'osm_healthcheck_shared_answers_total{listener="liveness"}';
    const refused = 'osm_healthcheck_probes_refused_total{listener="liveness"}';
    const before = await scrape();
    const running = [probe('app'), probe('b')];
    await holding.arrived(2);
    // A second request for app within its check's first 100 ms joins it: the app sees no third request.
    const joined = probe('app');
    const during = await scrape();
    expect(during.get('osm_healthcheck_probes_in_flight{listener="liveness"}')).toBe(2);
    // c would be a third check on a listener whose limit is 2, all of them this caller's own: refused at once.
    expect((await probe('c')).status).toBe(503);
    holding.release();
    expect((await Promise.all([...running, joined])).map((a) => a.status)).toEqual([200, 200, 200]);
    const after = await scrape();
    expect(after.get('osm_healthcheck_probes_in_flight{listener="liveness"}')).toBe(0);
    expect(count(after, refused)).toBe(count(before, refused) + 1);
    expect(count(after, shared)).toBe(count(before, shared) + 1);
    expect(count(after, runs('app'))).toBe(count(before, runs('app')) + 1);
    expect(count(after, runs('b'))).toBe(count(before, runs('b')) + 1);
    expect(count(after, runs('c'))).toBe(count(before, runs('c')));
  });

  it('counts a request answered at its deadline by the check running when it arrived as shared and as a deadline answer', async () => {
    const probe = () => get(companion.url('liveness', '/osm-liveness-probe/app'));
    const shared = 'osm_healthcheck_shared_answers_total{listener="liveness"}';
    const atDeadline = 'osm_healthcheck_deadline_answers_total{listener="liveness"}';
    // The test before ended a check of app: past its window, the first request here begins its own.
    await pastFreshWindow();
    const before = await scrape();
    const first = probe();
    await holding.arrived(1);
    // Past the running check's window: the second request waits for the next check, which the app holds; its
    // deadline is its arrival plus as long as the first check took, so the first check's answer is its own.
    await pastFreshWindow();
    const late = probe();
    // Time for the request to reach the companion and wait there, on a busy machine too: were it to arrive after
    // the first check ended, it would begin its own, and the guard below releases it after 10 s rather than hang.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    holding.release();
    expect((await first).status).toBe(200);
    await holding.arrived(1);
    const guard = setTimeout(() => holding.release(), 10_000);
    const answered = await late;
    clearTimeout(guard);
    expect(answered.status).toBe(200);
    const after = await scrape();
    expect(after.get(atDeadline)).toBe((before.get(atDeadline) ?? 0) + 1);
    expect(after.get(shared)).toBe((before.get(shared) ?? 0) + 1);
    holding.release();
  });

  it.each([
    { name: 'a TCP connect', headers: { 'Original-Tcp-Port': 'APP' }, status: 200, outcome: 'tcp' },
    { name: 'a bad port header', headers: { 'Original-Tcp-Port': 'x' }, status: 400, outcome: 'invalid' },
    {
      name: 'a port not in the table',
      headers: { 'Original-Tcp-Port': '1' },
      status: 403,
      outcome: 'port_not_allowed',
    },
    {
      name: 'a wrap of no probe path',
      headers: { 'Original-Http-Port': '15904', 'Original-Http-Path': '/healthz' },
      status: 400,
      outcome: 'invalid',
    },
  ])('counts a header check of $name as $outcome', async ({ headers, status, outcome }) => {
    const key = `osm_healthcheck_header_checks_total{outcome="${outcome}"}`;
    const before = (await scrape()).get(key) ?? 0;
    const sent = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [
        name,
        value === 'APP' ? String(holding.app.port) : value,
      ]),
    );
    expect((await get(companion.url('healthcheck', '/osm-healthcheck'), sent)).status).toBe(status);
    expect((await scrape()).get(key)).toBe(before + 1);
  });
});
