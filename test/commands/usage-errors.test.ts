// One shape for every usage error of every command: `osm-healthcheck COMMAND: what is wrong (what is accepted)
// [OSM_HC_USAGE]`, exit 2, nothing on stdout; asked of the CLI's dispatch in this process (helpers/cli-in-process.ts)
// for each command and each kind of mistake, each flag that takes a value (the command's own list of its flags),
// each variable and each pair of flags; and of the built binary, the same words, for one of each kind.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';

/** Each command: a flag that takes a value, and a value it refuses. */
const COMMANDS = [
  { command: 'serve', flag: '--log-level', bad: 'loud' },
  { command: 'wait', flag: '--timeout', bad: 'soon' },
  { command: 'inject', flag: '--output', bad: 'xml' },
  { command: 'init', flag: '--uid', bad: '0' },
  { command: 'webhook', flag: '--port', bad: '99999' },
  { command: 'check', flag: '--output', bad: 'html' },
] as const;

const CASES = COMMANDS.flatMap(({ command, flag, bad }) => [
  {
    command,
    mistake: 'an unknown flag',
    args: ['--no-such-flag'],
    says: /^unknown flag --no-such-flag \(.*--help\)$/,
  },
  {
    command,
    mistake: 'a flag without its value',
    args: [flag],
    says: new RegExp(`^${flag} needs a value \\(`),
  },
  {
    command,
    mistake: 'a value the flag refuses',
    args: [flag, bad],
    says: new RegExp(`^${flag} "${bad}" is not accepted \\(`),
  },
  { command, mistake: 'a stray argument', args: ['stray'], says: /^unexpected argument "stray" \(/ },
]);

const SHAPE = /^osm-healthcheck (\w+): (.+) \((.+)\) \[OSM_HC_USAGE\]\n$/;

/**
 * The one shape, held for every usage error below: the command once (cli.ts puts it there, so no message may
 * start with it again), what is wrong, what is accepted in brackets, the code.
 */
const ONE_SHAPE = /^osm-healthcheck (\w[\w-]*): (?!\1[: ])[^\n]+ \([^\n]+\) \[OSM_HC_USAGE\]\n?$/;

/** Neutral ground: none of the machine's own variables decide a case (an empty variable is an unset one). */
const QUIET_ENV = {
  POD_IP: '',
  KUBERNETES_SERVICE_HOST: '',
  OSM_HEALTHCHECK_PROBES: '',
  OSM_HEALTHCHECK_PORTS: '',
  OSM_HEALTHCHECK_HOST: '',
  OSM_HEALTHCHECK_LOG_LEVEL: '',
  OSM_HEALTHCHECK_TLS_CERT: '',
  OSM_HEALTHCHECK_TLS_KEY: '',
  OSM_HEALTHCHECK_KUBE_API: '',
};

const POD = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a}]\n';
const TABLE = JSON.stringify({ liveness: { app: { tcpSocket: { port: 8080 } } } });
/** webhook with certificate files, so that a value the flags let through ends at the files (OSM_HC_TLS), never serves. */
const FILES = ['--tls-cert', 'c.pem', '--tls-key', 'k.pem'];
/** webhook with self-managed TLS and an API server no one answers: its names are checked before it is asked. */
const SELF = ['--kube-api', 'https://127.0.0.1:1'];

interface Bad {
  /** The flag with its bad value, and what else the command needs to get as far as reading it. */
  args: string[];
  env?: Record<string, string>;
  /** What the message must name; by default `--flag "value"`, the flag and the value it got. */
  says?: string;
}
/** A flag whose every value is a usage-valid one: what a wrong one leads to instead. */
interface NoBad {
  none: string;
}

/**
 * Every flag that takes a value, per command, with a value it refuses (or why none is a usage error). The first
 * test below asks each command for its flags, so a new flag fails here until it has its row.
 */
const FLAG_VALUES: Record<string, Record<string, Bad | NoBad>> = {
  serve: {
    '--probes': { none: 'a file: missing or invalid is OSM_HC_TABLE' },
    '--ports': { args: ['--ports', '1,2,3'] },
    '--allowed-ports': { args: ['--allowed-ports', '0'] },
    '--host': { none: 'an address it cannot bind is OSM_HC_LISTEN' },
    '--log-level': { args: ['--log-level', 'loud'] },
    '--shutdown-grace': { args: ['--shutdown-grace', '30s'] },
    '--shared-check-window': { args: ['--shared-check-window', '101'] },
    '--caller-rate': { args: ['--caller-rate', 'fast'] },
    '--verbosity': { args: ['--osm-edge-compat', '--verbosity', 'loud'] },
    '--seal-file': { none: "a file: missing or unreadable reads as open (init's verdict not there)" },
  },
  wait: {
    '--ports': { args: ['--ports', '1,2,3'] },
    '--host': { args: ['--host', 'companion'] },
    '--timeout': { args: ['--timeout', 'soon'] },
  },
  inject: {
    '--filename': { none: 'a file: missing or invalid is OSM_HC_MANIFEST' },
    '--image': { args: ['--image', 'a b'] },
    '--placement': { args: ['--placement', 'last'] },
    '--kube-version': { args: ['--kube-version', 'latest'] },
    '--pod-security': { args: ['--pod-security', 'Baseline'] },
    '--mesh-exclusion': { args: ['--mesh-exclusion', 'envoy'] },
    '--namespace-rules': { none: 'a file: missing or invalid is OSM_HC_MANIFEST' },
    '--companion-cpu-limit': { args: ['--companion-cpu-limit', '0'] },
    '--seal': { args: ['--seal', 'on'] },
    '--output': { args: ['--output', 'xml'] },
  },
  init: {
    '--ports': { args: ['--ports', '0'] },
    '--uid': { args: ['--uid', '0'] },
    '--ipv6': { args: ['--ipv6', 'maybe'] },
    '--backend': { args: ['--backend', 'iptables'] },
    '--seal-via': { args: ['--seal-via', 'node-1'] },
    '--agent-port': { args: ['--seal-via', '10.0.0.1', '--agent-port', '0'] },
    '--seal-file': { args: ['--seal-file', '/x'], says: '--seal-file without --seal-via' },
  },
  node: {
    '--pod-cidr': {
      args: ['--pod-cidr', '10.88.0.1/16'],
      says: '--pod-cidr "10.88.0.1/16" has host bits set',
    },
    '--backend': { args: ['--pod-cidr', '10.88.0.0/16', '--backend', 'iptables'] },
    '--resync': { args: ['--pod-cidr', '10.88.0.0/16', '--resync', '0'] },
    '--listen': { none: 'an address it cannot bind is OSM_HC_NODE' },
    '--port': { args: ['--pod-cidr', '10.88.0.0/16', '--port', '99999'] },
    '--node-name': { args: ['--pod-cidr', '10.88.0.0/16', '--node-name', 'Node_1'] },
    '--kube-api': { args: ['--pod-cidr', '10.88.0.0/16', '--kube-api', 'http://10.96.0.1'] },
    '--kube-ca': { none: "a file: read when the API server is asked, its failures are OSM_HC_NODE's" },
    '--kube-token-file': {
      none: "a file: read when the API server is asked, its failures are OSM_HC_NODE's",
    },
  },
  webhook: {
    '--tls-cert': { args: ['--tls-cert', 'c.pem'] },
    '--tls-key': { args: ['--tls-key', 'k.pem'] },
    '--namespace': { args: [...SELF, '--namespace', 'Kube_System'] },
    '--service': { args: [...SELF, '--namespace', 'ns', '--service', 'Web_Hook'] },
    '--tls-secret': { args: [...SELF, '--namespace', 'ns', '--tls-secret', 'tls/secret'] },
    '--webhook-config': { args: [...SELF, '--namespace', 'ns', '--webhook-config', 'a/b'] },
    '--tls-resync': { args: [...SELF, '--namespace', 'ns', '--tls-resync', '0'] },
    '--port': { args: [...FILES, '--port', '99999'] },
    '--metrics-port': { args: [...FILES, '--metrics-port', 'http'] },
    '--admission-timeout': { args: [...FILES, '--admission-timeout', '31'] },
    '--host': { none: 'an address it cannot bind is OSM_HC_LISTEN' },
    '--image': { args: [...FILES, '--image', 'a b'] },
    '--placement': { args: [...FILES, '--placement', 'last'] },
    '--pod-security-default': { args: [...FILES, '--pod-security-default', 'Baseline'] },
    '--companion-cpu-limit': { args: [...FILES, '--companion-cpu-limit', '1 core'] },
    '--seal': { args: [...FILES, '--seal', 'on'] },
    '--kube-api': { args: [...FILES, '--kube-api', 'http://10.96.0.1'] },
    '--kube-ca': { none: 'a file: read when the API server is asked, its failures are OSM_HC_KUBE' },
    '--kube-token-file': { none: 'a file: read when the API server is asked, its failures are OSM_HC_KUBE' },
    '--log-level': { args: [...FILES, '--log-level', 'loud'] },
  },
  check: {
    '--probes': { none: 'a file: missing or invalid is OSM_HC_TABLE' },
    '--ports': { args: ['--via-companion', '--ports', '1,2,3'] },
    '--kind': { args: ['--kind', 'alive'], env: { OSM_HEALTHCHECK_PROBES: TABLE } },
    '--container': { args: ['--container', 'web'], env: { OSM_HEALTHCHECK_PROBES: TABLE } },
    '--output': { args: ['--output', 'html'] },
  },
};

/** Environment variables that stand for a flag (or are read alone): a bad value is a usage error naming it. */
const ENV_VALUES: readonly { command: string; env: Record<string, string>; args?: string[] }[] = [
  { command: 'serve', env: { POD_IP: 'pod.local' } },
  { command: 'serve', env: { OSM_HEALTHCHECK_PORTS: '1,2,3' } },
  { command: 'serve', env: { OSM_HEALTHCHECK_ALLOWED_PORTS: '0' } },
  { command: 'serve', env: { OSM_HEALTHCHECK_LOG_LEVEL: 'loud' } },
  { command: 'serve', env: { OSM_HEALTHCHECK_SHUTDOWN_GRACE_SECONDS: '-1' } },
  { command: 'serve', env: { OSM_HEALTHCHECK_RESTARTS: 'many' } },
  { command: 'wait', env: { OSM_HEALTHCHECK_PORTS: '0,0,0,0' } },
  { command: 'wait', env: { OSM_HEALTHCHECK_HOST: 'companion' } },
  { command: 'check', env: { POD_IP: 'pod.local' } },
  { command: 'check', env: { OSM_HEALTHCHECK_PORTS: '1,2,3' }, args: ['--via-companion'] },
  { command: 'webhook', env: { OSM_HEALTHCHECK_TLS_CERT: 'c.pem' } },
  { command: 'webhook', env: { OSM_HEALTHCHECK_WEBHOOK_PORT: 'https' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_IMAGE: 'a b' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_METRICS_PORT: '-1' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_ADMISSION_TIMEOUT_SECONDS: '0' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_PLACEMENT: 'native' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_NATIVE_SIDECAR: 'yes' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_POD_SECURITY_DEFAULT: 'Baseline' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_COMPANION_CPU_LIMIT: '0' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_KUBE_API: 'http://10.96.0.1' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_LOG_LEVEL: 'loud' }, args: FILES },
  { command: 'webhook', env: { OSM_HEALTHCHECK_NAMESPACE: 'Kube_System' }, args: SELF },
  {
    command: 'webhook',
    env: { OSM_HEALTHCHECK_WEBHOOK_SERVICE: 'Web_Hook' },
    args: [...SELF, '--namespace', 'ns'],
  },
  {
    command: 'webhook',
    env: { OSM_HEALTHCHECK_TLS_SECRET: 'tls/secret' },
    args: [...SELF, '--namespace', 'ns'],
  },
  {
    command: 'webhook',
    env: { OSM_HEALTHCHECK_WEBHOOK_CONFIG: 'a/b' },
    args: [...SELF, '--namespace', 'ns'],
  },
  {
    command: 'webhook',
    env: { OSM_HEALTHCHECK_TLS_RESYNC_SECONDS: '0' },
    args: [...SELF, '--namespace', 'ns'],
  },
];

/** Flags that depend on each other: wrong together, each fine alone. */
const COMBINATIONS: readonly {
  command: string;
  args: string[];
  says: string;
  env?: Record<string, string>;
}[] = [
  { command: 'serve', args: ['--verbosity', 'info'], says: '--verbosity goes with --osm-edge-compat' },
  {
    command: 'serve',
    args: ['--osm-edge-compat', '--verbosity', 'info', '--log-level', 'info'],
    says: '--verbosity and --log-level both given',
  },
  {
    command: 'serve',
    args: ['--osm-edge-compat', '--ports', '0,0,0,0'],
    env: { OSM_HEALTHCHECK_PROBES: TABLE },
    says: '--osm-edge-compat serves /osm-healthcheck alone, but a probe table came from env OSM_HEALTHCHECK_PROBES',
  },
  { command: 'wait', args: ['--ports', '1,2,3,0'], says: '--ports "1,2,3,0" is not accepted' },
  { command: 'check', args: [], says: 'no probe table' },
  { command: 'check', args: ['--ports', '1,2,3,4'], says: '--ports without --via-companion' },
  {
    command: 'check',
    args: [],
    env: { OSM_HEALTHCHECK_PROBES: '{}' },
    says: 'the probe table has no entries',
  },
  {
    command: 'check',
    args: ['--kind', 'readiness', '--container', 'app'],
    env: { OSM_HEALTHCHECK_PROBES: TABLE },
    says: '--kind readiness --container app selects no probe',
  },
  {
    command: 'inject',
    args: ['--native-sidecar', '--placement', 'first'],
    says: '--native-sidecar (--placement native-sidecar) and --placement first both given',
  },
  { command: 'init', args: ['--ports', '15904-15901'], says: '--ports range "15904-15901" runs backwards' },
  {
    command: 'webhook',
    args: [],
    says: 'self-managed TLS (no --tls-cert/--tls-key) needs the API server',
  },
  {
    command: 'webhook',
    args: [],
    env: { KUBERNETES_SERVICE_HOST: 'a b', KUBERNETES_SERVICE_PORT: '443' },
    says: 'env KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT make "https://a b:443", no URL',
  },
];

/** POD as a file: inject reads its input before it checks some values, and this process's stdin is vitest's. */
const POD_FILE = join(mkdtempSync(join(tmpdir(), 'osm-hc-usage-')), 'pod.yaml');
writeFileSync(POD_FILE, POD);
afterAll(() => rmSync(dirname(POD_FILE), { recursive: true, force: true }));

async function usageErrorOf(command: string, args: string[], env: Record<string, string> = {}) {
  const input = command === 'inject' && !args.includes('-f') ? ['-f', POD_FILE] : [];
  const { code, stdout, stderr } = await runInProcess([command, ...args, ...input], { ...QUIET_ENV, ...env });
  expect({ code, stdout, stderr }).toMatchObject({ code: 2, stdout: '' });
  expect(stderr).toMatch(ONE_SHAPE);
  return stderr;
}

describe('usage errors: one shape in every command', () => {
  it.each(CASES)('$command, $mistake', async ({ command, args, says }) => {
    const { code, stdout, stderr } = await runInProcess([command, ...args]);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(ONE_SHAPE);
    const match = SHAPE.exec(stderr);
    expect(match, stderr).not.toBeNull();
    const [, named, problemAndAccepted] = match ?? [];
    expect(named).toBe(command);
    // The command is named once, by cli.ts: never `osm-healthcheck inject: inject: ...`.
    expect(stderr.startsWith(`osm-healthcheck ${command}: ${command}`)).toBe(false);
    expect(`${problemAndAccepted} (${(match ?? [])[3]})`).toMatch(says);
    // Our own words, not node:util parseArgs' (which suggest `--` with a broken quote).
    expect(stderr).not.toMatch(/To specify a positional argument|ERR_PARSE_ARGS/);
  });
});

describe('inject: the flags that depend on each other and on the Kubernetes version', () => {
  it.each([
    { args: ['--kube-version', '1.3'], says: '--kube-version "1.3" is older than 1.19 (1.19 or later' },
    { args: ['--kube-version', '2.0'], says: '--kube-version "2.0" is no Kubernetes version (1.19 or later' },
    { args: ['--kube-version', 'latest'], says: '--kube-version "latest" is no Kubernetes version (' },
    {
      args: ['--sidecar-containers-gate', '--kube-version', '1.33'],
      says: '--sidecar-containers-gate means nothing with --kube-version 1.33 (it goes with --kube-version 1.28',
    },
    {
      args: ['--sidecar-containers-gate'],
      says: '--sidecar-containers-gate means nothing with no --kube-version (',
    },
    { args: ['-f', 'a.yaml', '-'], says: 'unexpected argument "-" (' },
    { args: ['--image', '--placement', 'first'], says: '--image needs a value, got the flag --placement (' },
  ])('$args', async ({ args, says }) => {
    const { code, stderr } = await runInProcess(['inject', ...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(ONE_SHAPE);
    expect(stderr).toContain(`osm-healthcheck inject: ${says}`);
  });

  it('takes 1.19 and later, the gate with 1.28, and a lone - for stdin as the synopsis offers', async () => {
    const pod =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n';
    for (const args of [
      ['--kube-version', '1.19'],
      ['--kube-version', 'v1.28.3', '--sidecar-containers-gate'],
      ['-'],
    ]) {
      const { code, stderr, stdout } = await runCli(['inject', ...args], { input: pod });
      expect(code, `${args.join(' ')}: ${stderr}`).toBe(0);
      expect(stdout).toContain('name: osm-healthcheck');
    }
  });
});

describe('usage errors: every flag that takes a value, every variable, every combination, in the one shape', () => {
  it.each(Object.keys(FLAG_VALUES))(
    '%s: the table has a row for each flag the command takes a value for',
    async (command) => {
      const { stderr } = await runInProcess([command, '--no-such-flag'], QUIET_ENV);
      const takes = /\(\w+ takes (.*)\) \[OSM_HC_USAGE\]/.exec(stderr)?.[1] ?? '';
      const valued = takes
        .split(', ')
        .filter((flag) => flag.endsWith(' VALUE'))
        .map((flag) => flag.replace(/(\/-\w)? VALUE$/, ''));
      expect(valued.length, stderr).toBeGreaterThan(0);
      expect(Object.keys(FLAG_VALUES[command] ?? {}).sort()).toEqual(valued.sort());
    },
  );

  const badValues = Object.entries(FLAG_VALUES).flatMap(([command, flags]) =>
    Object.entries(flags).flatMap(([flag, row]) => ('none' in row ? [] : [{ command, flag, ...row }])),
  );
  it.each(badValues)('$command $flag: a value it refuses', async ({ command, flag, args, env, says }) => {
    const stderr = await usageErrorOf(command, args, env);
    const value = args[args.indexOf(flag) + 1];
    expect(stderr).toContain(`osm-healthcheck ${command}: ${says ?? `${flag} ${JSON.stringify(value)}`}`);
  });

  it.each(ENV_VALUES.map((row) => ({ ...row, name: Object.keys(row.env)[0] })))(
    '$command: env $name',
    async ({ command, env, args, name }) => {
      const stderr = await usageErrorOf(command, args ?? [], env);
      expect(stderr).toContain(`osm-healthcheck ${command}: env ${name} ${JSON.stringify(env[name ?? ''])}`);
    },
  );

  it.each(COMBINATIONS)('$command $args', async ({ command, args, env, says }) => {
    expect(await usageErrorOf(command, args, env)).toContain(`osm-healthcheck ${command}: ${says}`);
  });

  it('an unknown command: the commands there are, in the same shape, then the help', async () => {
    const { code, stdout, stderr } = await runInProcess(['frobnicate'], QUIET_ENV);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    const [first, blank] = stderr.split('\n');
    expect(first).toBe(
      'osm-healthcheck: unknown command "frobnicate" (serve, wait, inject, init, node, webhook, check, analyze) [OSM_HC_USAGE]',
    );
    expect(blank).toBe('');
    expect(stderr).toContain('Usage: osm-healthcheck <command> [flags]');
  });

  it("docs/error-codes.md's example is wait's own line", async () => {
    const page = readFileSync(new URL('../../docs/error-codes.md', import.meta.url), 'utf8');
    const example = /`(osm-healthcheck wait: env OSM_HEALTHCHECK_PORTS "([^"]*)"[^`]*)`/.exec(page);
    expect(example).not.toBeNull();
    const [, line, value] = example ?? [];
    expect(await usageErrorOf('wait', [], { OSM_HEALTHCHECK_PORTS: value ?? '' })).toBe(`${line}\n`);
  });

  it('holds the shape itself: a doubled command or no accepted part is refused', () => {
    expect('osm-healthcheck serve: --ports "1" is not accepted (four ports) [OSM_HC_USAGE]\n').toMatch(
      ONE_SHAPE,
    );
    for (const line of [
      'osm-healthcheck webhook: webhook got --tls-cert without --tls-key (both) [OSM_HC_USAGE]\n',
      'osm-healthcheck webhook: webhook: --port (a port) [OSM_HC_USAGE]\n',
      'osm-healthcheck check: --kind must be one of liveness, got "x" [OSM_HC_USAGE]\n',
    ]) {
      expect(line).not.toMatch(ONE_SHAPE);
    }
  });
});

describe('the built binary says the same, with the same status', () => {
  it.each([
    { args: ['frobnicate'], env: {} },
    { args: ['serve', '--ports', '1,2,3'], env: {} },
    { args: ['wait'], env: { OSM_HEALTHCHECK_PORTS: '0,0,0,0' } },
    { args: ['webhook', ...SELF, '--namespace', 'Kube_System'], env: {} },
    { args: ['inject', '--kube-version', '1.3'], env: {} },
  ])('$args', async ({ args, env }) => {
    const spawned = await runCli(args, { env: { ...QUIET_ENV, ...env }, input: POD, timeoutMs: 20_000 });
    expect(spawned.code).toBe(2);
    expect(spawned).toEqual(await runInProcess(args, { ...QUIET_ENV, ...env }));
  });
});
