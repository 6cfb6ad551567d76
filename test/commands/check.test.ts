// `osm-healthcheck check` as a process, end to end: real HTTP, HTTPS, TCP and gRPC apps on loopback, each of
// kubelet's verdicts, probes bounded and in parallel, --via-companion through a running `serve`, a companion that
// is down, exit codes, and bad input.

import { once } from 'node:events';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, httpApp, tcpApp } from '../helpers/apps.js';
import { runCli, startCli } from '../helpers/cli.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';
import { makeTestCert } from '../helpers/tls.js';

interface JsonRow {
  kind: string;
  container: string;
  handler: string;
  target: string;
  via: { port: number; path: string; headers: Array<{ name: string; value: string }> } | null;
  verdict: string;
  status: number | null;
  ms: number;
  budgetMs: number;
  reason: string;
  kubeletWarning: string | null;
}
interface JsonReport {
  host: string;
  viaCompanion: boolean;
  companionPorts: Record<string, number> | null;
  passed: boolean;
  probes: JsonRow[];
}

const closers: Array<() => Promise<void>> = [];
/** What Go's http.Redirect writes for a GET. */
const FOUND = '<a href="http://other.example/">Found</a>.\n\n';
const KUBELET_WARNING = `Probe terminated redirects, Response body: ${FOUND}`;
let table: Record<string, unknown>;
let ports: { http: number; https: number; tcp: number; closed: number; grpc: number };
let tableJson: string;
const hanging = { now: 0, most: 0 };

beforeAll(async () => {
  const http = await httpApp((req, res) => {
    if (req.url === '/ok') return res.end('ok');
    // A redirect to another host is not followed: kubelet's Warning. No traffic goes to other.example.
    if (req.url === '/moved') return res.writeHead(302, { location: 'http://other.example/' }).end(FOUND);
    if (req.url === '/hang') {
      // Never answers; counts how many hang at once.
      hanging.now++;
      hanging.most = Math.max(hanging.most, hanging.now);
      req.on('close', () => hanging.now--);
      return;
    }
    res.writeHead(500).end('broken');
  });
  closers.push(() => http.close());
  const cert = makeTestCert();
  const https: HttpsServer = createHttpsServer({ key: cert.key, cert: cert.cert }, (_req, res) =>
    res.end('ok'),
  );
  https.listen(0, '127.0.0.1');
  await once(https, 'listening');
  closers.push(async () => {
    https.closeAllConnections();
    await new Promise((resolve) => https.close(resolve));
    cert.cleanup();
  });
  const tcp = await tcpApp((socket) => socket.end());
  closers.push(() => tcp.close());
  const server = new grpc.Server();
  new HealthImplementation({ '': 'SERVING', down: 'NOT_SERVING' }).addToServer(server);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err === null ? resolve(port) : reject(err),
    ),
  );
  closers.push(async () => {
    server.forceShutdown();
  });
  const address = https.address();
  if (address === null || typeof address === 'string') throw new Error('https: no address');
  ports = { http: http.port, https: address.port, tcp: tcp.port, closed: await closedPort(), grpc: grpcPort };
  table = {
    liveness: {
      web: { httpGet: { port: ports.http, path: '/ok' } },
      secure: { httpGet: { port: ports.https, path: '/', scheme: 'HTTPS' }, timeoutSeconds: 2 },
      health: { grpc: { port: ports.grpc } },
    },
    readiness: {
      web: { httpGet: { port: ports.http, path: '/moved' } },
      db: { tcpSocket: { port: ports.tcp } },
    },
    startup: {
      web: { httpGet: { port: ports.http, path: '/error' } },
      db: { tcpSocket: { port: ports.closed } },
      health: { grpc: { port: ports.grpc, service: 'down' } },
    },
  };
  tableJson = JSON.stringify(table);
});

afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
});

/** Each row as `kind container -> verdict status`. */
function verdicts(report: JsonReport): string[] {
  return report.probes.map((p) => `${p.kind} ${p.container} -> ${p.verdict} ${p.status}`);
}

const EVERY_VERDICT = [
  'liveness web -> success 200',
  'liveness secure -> success 200',
  'liveness health -> success 200',
  'readiness web -> warning 302',
  'readiness db -> success 200',
  'startup web -> failure 500',
  'startup db -> failure 503',
  'startup health -> failure 503',
];

describe('check, run from here with the companion prober', () => {
  it('gives each probe kubelet verdict, status, time against its budget and reason; exits 1 on a failure', async () => {
    const result = await runCli(['check', '-o', 'json'], { env: { OSM_HEALTHCHECK_PROBES: tableJson } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'osm-healthcheck check: 3 of 8 probes failed: startup web, startup db, startup health [OSM_HC_CHECK]\n',
    );
    const report = JSON.parse(result.stdout) as JsonReport;
    expect(report).toMatchObject({
      host: '127.0.0.1',
      viaCompanion: false,
      companionPorts: null,
      passed: false,
    });
    expect(verdicts(report)).toEqual(EVERY_VERDICT);
    const byName = new Map(report.probes.map((p) => [`${p.kind} ${p.container}`, p]));
    expect(byName.get('liveness web')).toMatchObject({
      handler: 'httpGet',
      target: `HTTP :${ports.http}/ok`,
      via: null,
      budgetMs: 900,
      reason: expect.stringMatching(new RegExp(`^GET http://127.0.0.1:${ports.http}/ok -> 200 in \\d+ ms$`)),
    });
    expect(byName.get('liveness secure')).toMatchObject({ target: `HTTPS :${ports.https}/`, budgetMs: 1900 });
    expect(byName.get('liveness health')?.target).toBe(`grpc :${ports.grpc} service=""`);
    expect(byName.get('readiness web')).toMatchObject({
      reason: expect.stringContaining('redirect to http://other.example/ not followed'),
      kubeletWarning: KUBELET_WARNING,
    });
    for (const probe of report.probes)
      if (probe.verdict !== 'warning') expect(probe.kubeletWarning).toBeNull();
    expect(byName.get('readiness db')?.target).toBe(`tcp :${ports.tcp}`);
    expect(byName.get('startup db')?.reason).toContain('ECONNREFUSED');
    expect(byName.get('startup health')?.reason).toContain('NOT_SERVING');
    for (const probe of report.probes) expect(probe.ms).toBeLessThanOrEqual(probe.budgetMs);
  });

  it('prints a readable table by default', async () => {
    const result = await runCli(['check'], { env: { OSM_HEALTHCHECK_PROBES: tableJson } });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('8 probes run from here against 127.0.0.1, as the companion runs them');
    expect(lines[2]).toMatch(/^KIND +CONTAINER +TARGET +VERDICT +STATUS +TIME +REASON$/);
    expect(lines[3]).toMatch(
      new RegExp(
        `^liveness +web +HTTP :${ports.http}/ok +Success +200 +\\d+ ms / 900 ms +GET http://127.0.0.1:`,
      ),
    );
    expect(lines[6]).toMatch(/^readiness +web +HTTP :\d+\/moved +Warning +302 /);
    expect(lines[6]?.endsWith(`; kubelet: ${JSON.stringify(KUBELET_WARNING)}`)).toBe(true);
    expect(lines[10]).toMatch(/^startup +health +grpc :\d+ service="down" +Failure +503 /);
    expect(lines.at(-2)).toBe('3 of 8 probes failed: startup web, startup db, startup health');
  });

  it.each([
    { name: 'only successes', args: ['--kind', 'liveness'], rows: 3 },
    { name: 'a Warning passes, as in kubelet', args: ['--kind', 'readiness', '--container', 'web'], rows: 1 },
    {
      name: 'a selection of containers',
      args: ['--container', 'db,health', '--kind', 'liveness,readiness'],
      rows: 2,
    },
  ])('exits 0 when every selected probe passes: $name', async ({ args, rows }) => {
    const result = await runCli(['check', '-o', 'json', ...args], {
      env: { OSM_HEALTHCHECK_PROBES: tableJson },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as JsonReport;
    expect(report.passed).toBe(true);
    expect(report.probes).toHaveLength(rows);
  });

  it('runs the probes in parallel, each within its own budget', async () => {
    const hang = { httpGet: { port: ports.http, path: '/hang' } };
    const slow = { liveness: { a: hang, b: hang }, readiness: { a: hang }, startup: { a: hang } };
    hanging.most = 0;
    const result = await runCli(['check', '-o', 'json'], {
      env: { OSM_HEALTHCHECK_PROBES: JSON.stringify(slow) },
    });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as JsonReport;
    for (const probe of report.probes) {
      expect(probe.reason).toContain('timeout after 900 ms waiting for response headers');
      expect(probe.ms).toBeGreaterThanOrEqual(900);
      expect(probe.ms).toBeLessThan(900 + BUSY_MACHINE_SLACK_MS);
    }
    // In parallel: the app had all four waiting at once (one after the other, it would never see two).
    expect(hanging.most).toBe(4);
  });

  it('probes POD_IP when it is set, as serve does', async () => {
    const app = await tcpApp((socket) => socket.end(), '::1');
    try {
      const result = await runCli(['check', '-o', 'json'], {
        env: {
          POD_IP: '::1',
          OSM_HEALTHCHECK_PROBES: JSON.stringify({ liveness: { app: { tcpSocket: { port: app.port } } } }),
        },
      });
      expect(result.code).toBe(0);
      const report = JSON.parse(result.stdout) as JsonReport;
      expect(report.host).toBe('::1');
      expect(report.probes[0]?.reason).toMatch(
        new RegExp(`^tcp \\[::1\\]:${app.port} connected in \\d+ ms$`),
      );
    } finally {
      await app.close();
    }
  });
});

describe('check --via-companion', () => {
  it('sends each probe through a running companion as kubelet does, and judges its answer as kubelet does', async () => {
    const serve = await startCli(
      ['serve'],
      {
        OSM_HEALTHCHECK_PORTS: '0,0,0,0',
        OSM_HEALTHCHECK_HOST: '127.0.0.1',
        OSM_HEALTHCHECK_PROBES: tableJson,
      },
      (line) => line.msg === 'serving',
    );
    try {
      const bound = serve.line.ports as Record<'liveness' | 'readiness' | 'startup' | 'healthcheck', number>;
      const list = [bound.liveness, bound.readiness, bound.startup, bound.healthcheck].join(',');
      const result = await runCli(['check', '--via-companion', '-o', 'json'], {
        env: { OSM_HEALTHCHECK_PROBES: tableJson, OSM_HEALTHCHECK_PORTS: list },
      });
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as JsonReport;
      expect(report).toMatchObject({ viaCompanion: true, companionPorts: bound, passed: false });
      expect(verdicts(report)).toEqual(EVERY_VERDICT);
      const byName = new Map(report.probes.map((p) => [`${p.kind} ${p.container}`, p]));
      expect(byName.get('liveness web')).toMatchObject({
        via: { port: bound.liveness, path: '/osm-liveness-probe/web', headers: [] },
        budgetMs: 1000,
        reason: expect.stringMatching(/^liveness web: GET http:\/\/127.0.0.1:\d+\/ok -> 200 in \d+ ms$/),
      });
      expect(byName.get('readiness db')).toMatchObject({
        via: {
          port: bound.healthcheck,
          path: '/osm-healthcheck',
          headers: [{ name: 'Original-Tcp-Port', value: String(ports.tcp) }],
        },
        reason: expect.stringMatching(/^healthcheck: tcp 127.0.0.1:\d+ connected in \d+ ms$/),
      });
      expect(byName.get('startup health')?.via?.port).toBe(bound.startup);
      expect(byName.get('startup web')?.reason).toMatch(/^startup web: GET .* -> 500 in \d+ ms$/);
      // kubelet's Warning reads as without the mesh; our reason came in the companion's header.
      expect(byName.get('readiness web')).toMatchObject({
        reason: expect.stringMatching(
          /^readiness web: GET http:\/\/127.0.0.1:\d+\/moved -> 302 \(redirect to http:\/\/other.example\/ not followed: other host\) in \d+ ms$/,
        ),
        kubeletWarning: KUBELET_WARNING,
      });

      const table = await runCli(['check', '--via-companion', '--ports', list, '--kind', 'readiness'], {
        env: { OSM_HEALTHCHECK_PROBES: tableJson },
      });
      expect(table.code).toBe(0);
      expect(table.stdout).toContain(
        `through the companion at 127.0.0.1 (ports ${list}), as kubelet sends them`,
      );
      expect(table.stdout).toMatch(
        new RegExp(
          `readiness +db +tcp :${ports.tcp} +:${bound.healthcheck}/osm-healthcheck Original-Tcp-Port: ${ports.tcp} +Success +200 `,
        ),
      );
    } finally {
      serve.child.kill('SIGKILL');
    }
  });

  it('shows a companion that is down: every probe fails without a status', async () => {
    const down = await closedPort();
    const result = await runCli(
      ['check', '--via-companion', '--ports', [down, down, down, down].join(','), '-o', 'json'],
      { env: { OSM_HEALTHCHECK_PROBES: tableJson } },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('8 of 8 probes failed');
    const report = JSON.parse(result.stdout) as JsonReport;
    for (const probe of report.probes) {
      expect(probe).toMatchObject({ verdict: 'failure', status: null });
      expect(probe.reason).toMatch(
        new RegExp(
          `^GET http://127.0.0.1:${down}/osm-\\S+ failed: connect ECONNREFUSED 127.0.0.1:${down} \\(is the companion running\\?\\)$`,
        ),
      );
    }
  });
});

describe('check, bad input', () => {
  it.each([
    {
      name: 'an invalid table (the same text as serve)',
      args: [],
      env: { OSM_HEALTHCHECK_PROBES: '{"liveness":{"app":{"httpGet":{"port":"http"}}}}' },
      message:
        'osm-healthcheck check: liveness.app.httpGet.port: must be an integer 1-65535, got "http" [OSM_HC_TABLE]',
    },
    {
      name: 'table JSON that does not parse',
      args: [],
      env: { OSM_HEALTHCHECK_PROBES: '{' },
      message: 'env OSM_HEALTHCHECK_PROBES is not valid JSON',
    },
    {
      name: 'a missing table file',
      args: ['--probes', '/nonexistent/p.json'],
      env: {},
      message: 'cannot read probe table file /nonexistent/p.json',
    },
    {
      name: 'no table at all',
      args: [],
      env: { OSM_HEALTHCHECK_PROBES: '' },
      message:
        'no probe table (pass --probes FILE or set env OSM_HEALTHCHECK_PROBES, as for serve) [OSM_HC_USAGE]',
    },
    {
      name: 'an empty table',
      args: [],
      env: { OSM_HEALTHCHECK_PROBES: '{}' },
      message: 'the probe table has no entries',
    },
    {
      name: 'an unknown --kind',
      args: ['--kind', 'alive'],
      env: {},
      message: '--kind "alive" is not accepted (liveness, readiness, startup)',
    },
    {
      name: 'a --container the table does not have',
      args: ['--container', 'nope'],
      env: {},
      message: '--container "nope" is not in the probe table (its containers: web, secure, health, db)',
    },
    {
      name: 'filters that select nothing',
      args: ['--kind', 'readiness', '--container', 'health'],
      env: {},
      message: '--kind readiness --container health selects no probe (the table has: liveness web,',
    },
    {
      name: 'an unknown output',
      args: ['-o', 'yaml'],
      env: {},
      message: '--output "yaml" is not accepted (table or json)',
    },
    {
      name: '--ports without --via-companion',
      args: ['--ports', '1,2,3,4'],
      env: {},
      message: '--ports goes with --via-companion',
    },
    {
      name: 'bad --ports',
      args: ['--via-companion', '--ports', '1,2,3'],
      env: {},
      message: '--ports "1,2,3" is not accepted (four ports 0-65535: liveness,readiness,startup,healthcheck)',
    },
    {
      name: 'port 0 in --ports',
      args: ['--via-companion', '--ports', '15901,0,15903,15904'],
      env: {},
      message: '--ports "15901,0,15903,15904" is not accepted (the companion\'s ports; 0 cannot be dialled)',
    },
    {
      name: 'a bad POD_IP',
      args: [],
      env: { POD_IP: 'pod.local' },
      message: `env POD_IP "pod.local" is not accepted (an IP address: the pod's status.podIP)`,
    },
    {
      name: 'an argument',
      args: ['now'],
      env: {},
      message: 'unexpected argument "now" (check takes flags only',
    },
    { name: 'an unknown flag', args: ['--nope'], env: {}, message: 'unknown flag --nope (check takes ' },
  ])('exits 2 on $name, naming it', async ({ args, env, message }) => {
    const result = await runCli(['check', ...args], { env: { OSM_HEALTHCHECK_PROBES: tableJson, ...env } });
    expect(result.stderr).toContain(message);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  });

  it('is listed in the help, with its own', async () => {
    expect((await runCli(['--help'])).stdout).toMatch(/^ {2}check +run the probe table's probes once/m);
    const help = await runCli(['check', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--via-companion');
  });
});
