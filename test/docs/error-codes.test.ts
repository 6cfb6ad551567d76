// docs/error-codes.md's examples, each run with the real CLI: every documented code is produced by the case the
// page gives for it, with the exit code it says. A code without an example, or an example no case runs, fails here.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { closedPort, httpApp, tcpApp } from '../helpers/apps.js';
import { type Exit, ROOT, runCli, startCli } from '../helpers/cli.js';
import { ENVTEST_NEEDS, startEnvtest } from '../helpers/envtest.js';
import { kubeconfigFor } from '../helpers/kubeconfig.js';
import { stagedCli } from '../helpers/staged-cli.js';
import { type Need, root, skipWithout, tool } from '../helpers/system-tools.js';

/** What one example yields: an exit (code and stderr), or a log line the still-running command wrote. */
type Outcome = { exit: Exit } | { logged: Record<string, unknown> };

interface Case {
  code: string;
  /** The example column of the code's row, exactly. */
  example: string;
  /** The exit the page says, or undefined for a code that is only logged. */
  exit?: number;
  /** What the case needs of the machine (envtest), else nothing. */
  needs?: readonly Need[];
  run(): Promise<Outcome>;
}

const DIR = mkdtempSync(join(tmpdir(), 'osm-hc-error-codes-'));
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

/** A probe table of one HTTP liveness probe against `port`. */
function table(port: number): string {
  const path = join(DIR, `probes-${port}.json`);
  writeFileSync(
    path,
    JSON.stringify({ liveness: { app: { httpGet: { path: '/', port, scheme: 'HTTP' } } } }),
  );
  return path;
}

const INIT_NEEDS = [root('to run init as another user'), tool('setpriv', 'apt-get install util-linux')];

const CASES: Case[] = [
  {
    code: 'OSM_HC_USAGE',
    example: '`osm-healthcheck check` with no probe table (neither `--probes` nor `OSM_HEALTHCHECK_PROBES`)',
    exit: 2,
    run: async () => ({ exit: await runCli(['check'], { env: { OSM_HEALTHCHECK_PROBES: '' } }) }),
  },
  {
    code: 'OSM_HC_TABLE',
    example: '`osm-healthcheck serve --probes missing.json`',
    exit: 1,
    run: async () => ({ exit: await runCli(['serve', '--probes', join(DIR, 'missing.json')]) }),
  },
  {
    code: 'OSM_HC_MANIFEST',
    example: "`echo 'kind: [' \\| osm-healthcheck inject`",
    exit: 1,
    run: async () => ({ exit: await runCli(['inject'], { input: 'kind: [\n' }) }),
  },
  {
    code: 'OSM_HC_INIT',
    example: '`osm-healthcheck init` as a user other than root',
    exit: 1,
    run: async () => {
      const args = [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        stagedCli(),
        'init',
      ];
      const result = await execa('setpriv', args, { reject: false, timeout: 10_000 });
      return { exit: { code: result.exitCode ?? null, stdout: result.stdout, stderr: result.stderr } };
    },
  },
  {
    code: 'OSM_HC_NODE',
    example: '`osm-healthcheck node --pod-cidr 10.88.0.0/16` as a user other than root',
    exit: 1,
    needs: INIT_NEEDS,
    run: async () => {
      const args = ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, stagedCli()];
      const result = await execa('setpriv', [...args, 'node', '--pod-cidr', '10.88.0.0/16'], {
        reject: false,
        timeout: 10_000,
      });
      return { exit: { code: result.exitCode ?? null, stdout: result.stdout, stderr: result.stderr } };
    },
  },
  {
    code: 'OSM_HC_LISTEN',
    example: '`osm-healthcheck serve` while another process listens on one of its ports',
    exit: 1,
    run: async () => {
      const busy = await tcpApp((socket) => socket.destroy());
      try {
        const exit = await runCli(['serve', '--ports', `0,0,0,${busy.port}`], {
          env: { OSM_HEALTHCHECK_HOST: '127.0.0.1', OSM_HEALTHCHECK_PROBES: '' },
        });
        return { exit };
      } finally {
        await busy.close();
      }
    },
  },
  {
    code: 'OSM_HC_TLS',
    example: '`osm-healthcheck webhook --tls-cert missing.crt --tls-key missing.key`',
    exit: 1,
    run: async () => ({
      exit: await runCli([
        'webhook',
        '--tls-cert',
        join(DIR, 'missing.crt'),
        '--tls-key',
        join(DIR, 'missing.key'),
      ]),
    }),
  },
  {
    code: 'OSM_HC_KUBE',
    example:
      '`osm-healthcheck webhook --kube-api URL` whose API server drops every connection: a log line `"level":"warn","code":"OSM_HC_KUBE"`',
    run: async () => {
      const api = await tcpApp((socket) => socket.destroy());
      // The connection is dropped before TLS begins, so neither the token nor the CA is ever used.
      const token = join(DIR, 'token');
      writeFileSync(token, 'token\n');
      const ca = join(DIR, 'ca.crt');
      writeFileSync(ca, 'not used\n');
      try {
        const { child, line } = await startCli(
          [
            'webhook',
            ...['--port', '0', '--host', '127.0.0.1', '--namespace', 'osm-healthcheck'],
            ...['--kube-api', `https://127.0.0.1:${api.port}`, '--kube-token-file', token],
            ...['--kube-ca', ca],
          ],
          {},
          (logged) => logged.code === 'OSM_HC_KUBE',
        );
        child.kill('SIGKILL');
        return { logged: line };
      } finally {
        await api.close();
      }
    },
  },
  {
    code: 'OSM_HC_CHECK',
    example: "`osm-healthcheck check` while an app's probe answers 500",
    exit: 1,
    run: async () => {
      const app = await httpApp((_req, res) => {
        res.statusCode = 500;
        res.end('down\n');
      });
      try {
        return { exit: await runCli(['check', '--probes', table(app.port)]) };
      } finally {
        await app.close();
      }
    },
  },
  {
    code: 'OSM_HC_WAIT',
    example: '`osm-healthcheck wait --timeout 1` with no companion listening',
    exit: 1,
    run: async () => {
      const port = await closedPort();
      return { exit: await runCli(['wait', '--timeout', '1', '--ports', `15901,15902,15903,${port}`]) };
    },
  },
  {
    code: 'OSM_HC_CLUSTER',
    example: '`osm-healthcheck analyze` with a kubeconfig whose server drops every connection',
    exit: 3,
    run: async () => {
      const api = await tcpApp((socket) => socket.destroy());
      try {
        const kubeconfig = join(DIR, 'kubeconfig-dropping');
        writeFileSync(kubeconfig, kubeconfigFor(`https://127.0.0.1:${api.port}`, 'token'));
        return { exit: await runCli(['analyze', '--kubeconfig', kubeconfig, '-A']) };
      } finally {
        await api.close();
      }
    },
  },
  {
    code: 'OSM_HC_PROMETHEUS',
    example: '`osm-healthcheck analyze --probes --prometheus http://127.0.0.1:1`',
    exit: 3,
    needs: ENVTEST_NEEDS,
    run: async () => {
      const env = await startEnvtest();
      const port = await closedPort();
      try {
        const kubeconfig = join(DIR, 'kubeconfig-envtest-prometheus');
        writeFileSync(
          kubeconfig,
          kubeconfigFor(env.url, readFileSync(env.tokenFile('admin'), 'utf8'), env.caFile),
        );
        const args = [
          'analyze',
          '--kubeconfig',
          kubeconfig,
          '-A',
          '--probes',
          '--prometheus',
          `http://127.0.0.1:${port}`,
        ];
        return { exit: await runCli(args) };
      } finally {
        await env.stop();
      }
    },
  },
  {
    code: 'OSM_HC_ANALYZE',
    example: '`osm-healthcheck analyze -A` against an API server with no webhook installed',
    exit: 1,
    needs: ENVTEST_NEEDS,
    run: async () => {
      const env = await startEnvtest();
      try {
        const kubeconfig = join(DIR, 'kubeconfig-envtest');
        writeFileSync(
          kubeconfig,
          kubeconfigFor(env.url, readFileSync(env.tokenFile('admin'), 'utf8'), env.caFile),
        );
        return { exit: await runCli(['analyze', '--kubeconfig', kubeconfig, '-A']) };
      } finally {
        await env.stop();
      }
    },
  },
];

/** docs/error-codes.md's rows: code -> the example cell. */
function documented(): Map<string, string> {
  const rows = readFileSync(join(ROOT, 'docs/error-codes.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `OSM_HC_'));
  return new Map(
    rows.map((line) => {
      // Cells split on " | " (an escaped \| inside code stays in its cell).
      const cells = line.slice(2, -2).split(' | ');
      return [cells[0]?.replace(/`/g, '') ?? '', cells.at(-1) ?? ''];
    }),
  );
}

describe('docs/error-codes.md', () => {
  it('has an example for every code, and a case here runs each', () => {
    const rows = documented();
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect(CASES.map(({ code }) => code).sort()).toEqual([...rows.keys()].sort());
    for (const { code, example } of CASES) expect(rows.get(code), code).toBe(example);
  });

  it.each(CASES)(
    '$code: $example',
    async ({ code, exit, run, needs }) => {
      if (
        code === 'OSM_HC_INIT' &&
        skipWithout('docs/error-codes.md OSM_HC_INIT (init as uid 65534)', INIT_NEEDS)
      ) {
        return;
      }
      if (needs !== undefined && skipWithout(`docs/error-codes.md ${code}`, needs)) return;
      const outcome = await run();
      if (exit === undefined) {
        expect(outcome).toMatchObject({ logged: { level: 'warn', code } });
        return;
      }
      expect('exit' in outcome).toBe(true);
      if (!('exit' in outcome)) return;
      expect(outcome.exit.code, outcome.exit.stderr).toBe(exit);
      expect(outcome.exit.stderr.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`\\[${code}\\]$`));
    },
    20_000,
  );
});
