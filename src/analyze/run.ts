// One analyze run, in the order an operator asks: which cluster and version; is the webhook installed as it
// should be; does the API server really call it (the dry run, which also says what a pod created now gets); and
// then every pod it sees, in its class.

import { DEFAULT_IMAGE } from '../rewrite/companion.js';
import { RECORD_VERSION } from '../rewrite/record.js';
import { type Check, forbidden } from './checks.js';
import { readServerVersion } from './cluster-reads.js';
import { readDataPlane } from './data-plane.js';
import { roundTrip } from './dry-run.js';
import { readInstall } from './install.js';
import type { ClusterClient } from './kube-client.js';
import { type LabelSelector, selectorQuery } from './label-selector.js';
import { type Report, reportNeedsAction } from './report.js';
import { webhookSettings } from './webhook-settings.js';

export interface AnalyzeOptions {
  /** One namespace, or every one (-A). */
  namespace: string | undefined;
  webhookConfig: string;
  webhookNamespace: string;
  webhookDeployment: string;
  /** Where the round trip's pod goes: else the first namespace the webhook sees; false: no round trip. */
  dryRun: { namespace: string | undefined } | false;
  now: Date;
}

export async function analyzeCluster(client: ClusterClient, options: AnalyzeOptions): Promise<Report> {
  const serverVersion = await readServerVersion(client);
  const install = await readInstall(
    client,
    {
      webhookConfig: options.webhookConfig,
      deployment: options.webhookDeployment,
      namespace: options.webhookNamespace,
    },
    options.now,
  );
  const settings = install.settings ?? webhookSettings({});
  const checks: Check[] = [...install.checks];
  let current = {
    image: install.settings?.image ?? null,
    version: RECORD_VERSION,
    source:
      install.settings === undefined
        ? "this CLI's release: the webhook's Deployment was not read"
        : "the webhook's Deployment, and this CLI's release",
  };
  // The round trip first: the record it brings back says what a pod created now gets.
  if (options.dryRun !== false) {
    const target =
      options.dryRun.namespace ?? (await firstSelected(client, install.namespaceSelector, options.namespace));
    if (typeof target === 'object') {
      // Not knowing where to go is not "no namespace is labelled": say which right or flag would tell.
      checks.push(
        forbidden(
          'install',
          'dry-run',
          'the round trip',
          'list namespaces, to find one labelled for injection (or --dry-run-namespace NS)',
        ),
      );
    } else {
      const trip = await roundTrip(client, target);
      checks.push(trip.check);
      if (trip.live !== undefined) {
        current = { ...trip.live, source: 'the dry run: what the live webhook wrote' };
      }
    }
  }
  const plane = await readDataPlane({
    client,
    namespace: options.namespace,
    selectors: { namespace: install.namespaceSelector, object: install.objectSelector },
    settings: current.image === null ? settings : { ...settings, image: current.image },
    current: { image: current.image ?? undefined, version: current.version },
    ourImages: [DEFAULT_IMAGE, settings.image, ...(current.image === null ? [] : [current.image])],
    serverVersion,
  });
  checks.push(...plane.checks);
  return {
    cluster: { server: client.server, context: client.context, version: serverVersion.text },
    current,
    scope: options.namespace === undefined ? 'all namespaces' : `namespace ${options.namespace}`,
    checks,
    namespaces: plane.namespaces,
    counts: plane.counts,
    finished: plane.finished,
    groups: plane.groups,
    needsAction: reportNeedsAction(checks, plane.groups),
    tableless: plane.tableless,
    ...(plane.seal === undefined ? {} : { seal: plane.seal }),
  };
}

/**
 * The first namespace the webhook sees (within -n when given), for the round trip; undefined when none; `refused`
 * when namespaces may not be listed and no -n names one.
 */
async function firstSelected(
  client: ClusterClient,
  selector: LabelSelector | undefined,
  namespace: string | undefined,
): Promise<string | undefined | { refused: true }> {
  const query = encodeURIComponent(selectorQuery(selector));
  const field =
    namespace === undefined ? '' : `&fieldSelector=${encodeURIComponent(`metadata.name=${namespace}`)}`;
  const reply = await client.get(`/api/v1/namespaces?labelSelector=${query}${field}&limit=1`);
  if (!reply.ok) return namespace ?? (reply.status === 403 ? { refused: true } : undefined);
  const [first] = Array.isArray(reply.body.items) ? reply.body.items : [];
  const name = (first as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : undefined;
}
