// The deployed webhook's settings, read from its Deployment as the webhook reads its flags and environment.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { webhookSettings } from '../../src/analyze/webhook-settings.js';
import { DEFAULT_IMAGE } from '../../src/rewrite/companion.js';

type Json = Record<string, unknown>;

const deployment = (args: string[], env: { name: string; value: string }[] = [], extra: Json = {}): Json => ({
  spec: {
    template: {
      spec: { containers: [{ name: 'webhook', image: 'img:1', args: ['webhook', ...args], env }], ...extra },
    },
  },
});

describe('webhookSettings', () => {
  it("deploy/webhook's own Deployment: its image variable, the defaults, self-managed TLS", () => {
    const docs = parseAllDocuments(
      readFileSync(new URL('../../deploy/webhook/deployment.yaml', import.meta.url), 'utf8'),
    );
    const ours = docs.map((d) => d.toJS() as Json).find((d) => d.kind === 'Deployment') as Json;
    expect(webhookSettings(ours)).toEqual({
      image: 'osm-healthcheck',
      placement: 'auto',
      podSecurityDefault: 'privileged',
      companionCpuLimit: undefined,
      sidecarGate: false,
      // deploy/webhook alone: no node agent, so nothing is sealed (deploy/node's component turns it on).
      seal: 'off',
      problems: [],
    });
  });

  it('flags over variables, both --x value and --x=value', () => {
    const settings = webhookSettings(
      deployment(
        [
          '--image=a:2',
          '--placement',
          'first',
          '--pod-security-default',
          'baseline',
          '--companion-cpu-limit=100m',
          '--sidecar-containers-gate',
        ],
        [
          { name: 'OSM_HEALTHCHECK_IMAGE', value: 'b:3' },
          { name: 'OSM_HEALTHCHECK_PLACEMENT', value: 'native-sidecar' },
        ],
      ),
    );
    expect(settings).toMatchObject({
      image: 'a:2',
      placement: 'first',
      podSecurityDefault: 'baseline',
      companionCpuLimit: '100m',
      sidecarGate: true,
    });
  });

  it('--native-sidecar is an alias; the container image when nothing names one; unreadable values said', () => {
    expect(webhookSettings(deployment(['--native-sidecar'])).placement).toBe('native-sidecar');
    expect(webhookSettings(deployment([])).image).toBe('img:1');
    expect(webhookSettings({}).image).toBe(DEFAULT_IMAGE);
    expect(webhookSettings(deployment(['--placement=last', '--pod-security-default=lax'])).problems).toEqual([
      '--placement "last" is not accepted (--placement auto, native-sidecar, first, or --native-sidecar alone); auto assumed',
      '--pod-security-default "lax" is not accepted (privileged, baseline, restricted); privileged assumed',
    ]);
  });
});
