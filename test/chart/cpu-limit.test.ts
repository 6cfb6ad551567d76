// The chart's values schema and the webhook's own validation agree on companion.cpuLimit: every value the schema
// admits renders a --companion-cpu-limit the webhook takes at start-up, and every value the webhook would refuse
// (a zero limit among them: "0", "0.0", "0m") the schema refuses, so a `helm install` that succeeds never leaves
// webhook pods crash-looping. Each value is rendered by the real helm twice: as a user installs it (schema on) and
// with the schema skipped, whose args the webhook's flag reader (cpuLimitOf in src/companion-flags.ts) then judges.

import { describe, expect, it } from 'vitest';
import { cpuLimitOf } from '../../src/companion-flags.js';
import { skipWithoutHelm, template } from '../helpers/helm.js';
import type { Manifest } from '../helpers/kustomize.js';

const SKIP = skipWithoutHelm('test/chart/cpu-limit.test.ts');

/** The webhook container's args in the rendered objects. */
function webhookArgs(objects: Manifest[]): string[] {
  const deployment = objects.find((o) => o.kind === 'Deployment') as
    | { spec: { template: { spec: { containers: { name: string; args: string[] }[] } } } }
    | undefined;
  return deployment?.spec.template.spec.containers.find((c) => c.name === 'webhook')?.args ?? [];
}

/** What the webhook makes of its args' --companion-cpu-limit: accepted (the stored form, or none) or refused. */
function webhookVerdict(args: string[]): { accepted: boolean; limit?: string; why?: string } {
  const at = args.indexOf('--companion-cpu-limit');
  try {
    const limit = cpuLimitOf(at === -1 ? undefined : args[at + 1]);
    return { accepted: true, ...(limit === undefined ? {} : { limit }) };
  } catch (err) {
    return { accepted: false, why: (err as Error).message };
  }
}

describe.skipIf(SKIP)('companion.cpuLimit: the schema refuses exactly what the webhook refuses', () => {
  it.each([
    // Accepted by both: the stored form the webhook writes into pods.
    { value: '', accepted: true },
    { value: '  ', accepted: true },
    { value: '100m', accepted: true, limit: '100m' },
    { value: '0.5', accepted: true, limit: '500m' },
    { value: '.5', accepted: true, limit: '500m' },
    { value: '1.', accepted: true, limit: '1' },
    { value: '01', accepted: true, limit: '1' },
    { value: '+2', accepted: true, limit: '2' },
    { value: '0.0001', accepted: true, limit: '1m' },
    { value: '1e-50', accepted: true, limit: '1e-3' },
    { value: '5e-1', accepted: true, limit: '500e-3' },
    { value: '1k', accepted: true, limit: '1k' },
    { value: '1Ki', accepted: true, limit: '1Ki' },
    { value: '1E', accepted: true, limit: '1E' },
    { value: ' 250m ', accepted: true, limit: '250m' },
    { value: 0.5, accepted: true, limit: '500m' },
    { value: 2, accepted: true, limit: '2' },
    { value: 1e-9, accepted: true, limit: '1e-3' },
    // Refused by both: zero in every spelling, negatives, and what is no quantity.
    { value: '0', accepted: false },
    { value: '0.0', accepted: false },
    { value: '0m', accepted: false },
    { value: '00', accepted: false },
    { value: '.0', accepted: false },
    { value: '0.', accepted: false },
    { value: '0e3', accepted: false },
    { value: '0Ki', accepted: false },
    { value: '+0', accepted: false },
    { value: '-0', accepted: false },
    { value: '-1', accepted: false },
    { value: '-100m', accepted: false },
    { value: 'one core', accepted: false },
    { value: '1 m', accepted: false },
    { value: '1mm', accepted: false },
    { value: '1e', accepted: false },
    { value: '1n', accepted: false },
    { value: 'm', accepted: false },
    { value: '.', accepted: false },
    { value: 0, accepted: false },
    { value: -1, accepted: false },
  ])('$value: accepted $accepted', async ({ value, accepted, limit }) => {
    const values = { companion: { cpuLimit: value } };
    const installed = await template(values);
    const unchecked = await template(values, ['--skip-schema-validation']);
    expect(unchecked.ok ? '' : unchecked.error).toBe('');
    const rendered = unchecked.ok ? webhookArgs(unchecked.objects) : [];
    const webhook = webhookVerdict(rendered);

    expect({ schema: installed.ok, webhook: webhook.accepted }).toEqual({
      schema: accepted,
      webhook: accepted,
    });
    if (!installed.ok) expect(installed.error).toMatch(/companion\.cpuLimit/);
    expect(webhook.limit).toBe(limit);
    if (installed.ok) expect(webhookArgs(installed.objects)).toEqual(rendered);
  });
});
