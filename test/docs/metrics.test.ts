// docs/metrics.md's tables of series are what a scrape gives: every osm_healthcheck_* metric the expositions write
// (its `# TYPE` lines, from a real prom-client registry) has a row with its name and type, and no row names one
// it does not write.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Recorder } from '../../src/metrics/recorder.js';
import { createExposition, METRIC_PREFIX } from '../../src/metrics/registry.js';
import { createWebhookExposition } from '../../src/webhook/metrics/exposition.js';
import { WebhookRecorder } from '../../src/webhook/metrics/recorder.js';
import { ROOT } from '../helpers/cli.js';
import { TABLE } from '../metrics/table.js';

/** `name type` for each `# TYPE` line of the companion's and the webhook's expositions with our prefix. */
async function exposed(): Promise<string[]> {
  // The webhook with every series it can have: caches (an API server) and a self-managed CA.
  const webhook = new WebhookRecorder(5);
  webhook.watchingCaches();
  webhook.serving('AA', Date.now());
  webhook.ca(Date.now());
  const text = [
    await createExposition(new Recorder(TABLE), { version: '0.0.0', restarts: 0 }).metrics(),
    await createWebhookExposition(webhook, '0.0.0').metrics(),
  ].join('\n');
  return [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)]
    .filter((m) => m[1]?.startsWith(METRIC_PREFIX))
    .map((m) => `${m[1]} ${m[2]}`)
    .sort();
}

/** `name type` for each row of the page's table that names one of our series: `| \`name\` | type ... |`. */
function documented(): string[] {
  const page = readFileSync(join(ROOT, 'docs', 'metrics.md'), 'utf8');
  return [...page.matchAll(/^\| `(osm_healthcheck_[a-z_]+)` \| (counter|gauge|histogram)\b/gm)]
    .map((m) => `${m[1]} ${m[2]}`)
    .sort();
}

describe('docs/metrics.md', () => {
  it('has a row, with its type, for every osm_healthcheck_* series a scrape gives, and no other', async () => {
    const rows = documented();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(await exposed());
  });
});
