// The webhook's flag table read twice, as the webhook reads its argv and environment (commands/webhook.ts) and as
// analyze reads the webhook's Deployment (analyze/webhook-settings.ts): the same flag set must give the same
// companion settings, so analyze's expectations are the webhook's. The CPU limit `0.5` was the drift: the webhook
// stored `500m`, analyze passed `0.5` through.

import { describe, expect, it } from 'vitest';
import { webhookSettings } from '../../src/analyze/webhook-settings.js';
import { readFlags } from '../../src/commands/webhook.js';
import { UsageError } from '../../src/errors.js';
import { companionSettings, WEBHOOK_FLAGS, webhookArgs } from '../../src/webhook/settings.js';

type Env = Record<string, string | undefined>;

const deployment = (args: string[], env: Env) => ({
  spec: {
    template: {
      spec: {
        containers: [
          {
            name: 'webhook',
            args: ['webhook', ...args],
            env: Object.entries(env).flatMap(([name, value]) =>
              value === undefined ? [] : [{ name, value }],
            ),
          },
        ],
      },
    },
  },
});

/** What the running webhook would add pods with, and what analyze expects it to, from one flag set. */
function both(args: string[], env: Env = {}) {
  const { companion } = readFlags(args, env);
  const { problems, ...analyzed } = webhookSettings(deployment(args, env));
  expect(problems).toEqual([]);
  return { webhook: companion, analyze: analyzed };
}

describe("the webhook's flags, read by the webhook and by analyze", () => {
  it.each([
    { name: 'none: the defaults', args: [] },
    { name: 'a CPU limit of 0.5 is 500m for both', args: ['--companion-cpu-limit', '0.5'] },
    {
      name: 'a CPU limit from the environment',
      args: [],
      env: { OSM_HEALTHCHECK_COMPANION_CPU_LIMIT: '0.25' },
    },
    { name: 'a limit given as 1000m is 1', args: ['--companion-cpu-limit=1000m'] },
    { name: 'an empty limit is none (the chart default)', args: ['--companion-cpu-limit='] },
    {
      name: 'every companion flag',
      args: [
        '--image=reg.example/osm-healthcheck:9',
        '--placement',
        'first',
        '--pod-security-default',
        'baseline',
        '--sidecar-containers-gate',
        '--companion-cpu-limit',
        '100m',
      ],
    },
    { name: 'the --native-sidecar alias', args: ['--native-sidecar'] },
    {
      name: 'every companion variable, booleans spelled as the webhook takes them',
      args: [],
      env: {
        OSM_HEALTHCHECK_IMAGE: 'b:3',
        OSM_HEALTHCHECK_PLACEMENT: 'native-sidecar',
        OSM_HEALTHCHECK_POD_SECURITY_DEFAULT: 'restricted',
        OSM_HEALTHCHECK_SIDECAR_CONTAINERS_GATE: 'TRUE',
        OSM_HEALTHCHECK_NATIVE_SIDECAR: '1',
      },
    },
    {
      name: 'flags over variables',
      args: ['--image', 'a:2', '--placement=auto'],
      env: { OSM_HEALTHCHECK_IMAGE: 'b:3', OSM_HEALTHCHECK_PLACEMENT: 'first' },
    },
    {
      name: 'the flags that are no concern of the companion are read and left alone',
      args: [
        '--tls-cert',
        '/tls/tls.crt',
        '--tls-key',
        '/tls/tls.key',
        '--port',
        '8443',
        '--log-level',
        'debug',
      ],
    },
  ])('$name', ({ args, env }) => {
    const { webhook, analyze } = both(args, env);
    expect(analyze).toEqual(webhook);
  });

  it('stores the CPU limit as the API server does, for both', () => {
    expect(both(['--companion-cpu-limit', '0.5']).webhook.companionCpuLimit).toBe('500m');
  });

  it('the table names every flag once, each with its own variable', () => {
    const variables = Object.values(WEBHOOK_FLAGS).map((flag) => flag.env);
    expect(new Set(variables).size).toBe(variables.length);
    expect(variables.every((name) => name.startsWith('OSM_HEALTHCHECK_'))).toBe(true);
  });
});

describe('a value the webhook refuses', () => {
  it.each([
    { name: 'a CPU limit of 0', args: ['--companion-cpu-limit', '0'], from: '--companion-cpu-limit' },
    { name: 'no placement mode', args: ['--placement=last'], from: '--placement' },
    {
      name: 'no level',
      args: [],
      env: { OSM_HEALTHCHECK_POD_SECURITY_DEFAULT: 'lax' },
      from: 'env OSM_HEALTHCHECK_POD_SECURITY_DEFAULT',
    },
    {
      name: 'no boolean',
      args: [],
      env: { OSM_HEALTHCHECK_SIDECAR_CONTAINERS_GATE: 'yes' },
      from: 'env OSM_HEALTHCHECK_SIDECAR_CONTAINERS_GATE',
    },
  ])(
    '$name: the webhook stops with a usage error, analyze says it and assumes the default',
    ({ args, env, from }) => {
      const read = () => companionSettings(webhookArgs(args, env ?? {}));
      expect(read).toThrow(UsageError);
      expect(read).toThrow(from);
      const settings = webhookSettings(deployment(args, env ?? {}));
      expect(settings.problems).toHaveLength(1);
      expect(settings.problems[0]).toMatch(new RegExp(`^${from} .*; .* assumed$`));
    },
  );

  it('args the webhook would refuse as a whole: analyze reads its environment alone', () => {
    const settings = webhookSettings(
      deployment(['--no-such-flag'], { OSM_HEALTHCHECK_COMPANION_CPU_LIMIT: '0.5' }),
    );
    expect(settings.companionCpuLimit).toBe('500m');
    expect(settings.problems).toEqual([
      expect.stringMatching(/^its args: unknown flag --no-such-flag .*; only its environment read$/),
    ]);
  });
});
