// `osm-healthcheck analyze --probes`: its flags -> the pods' probes and restarts, and kubelet's liveness events
// (src/analyze/probes/) -> the live data where the user gives a source (--prometheus, or --companion-metrics) -> a
// table or JSON, and the exit status: findings are advice (0) unless --fail-on probes; a liveness probe that
// restarted pods within the window exits 1, with or without a live source.

import type { ClusterClient } from '../analyze/kube-client.js';
import { eachItem } from '../analyze/paged-list.js';
import { companionSamples } from '../analyze/probes/companion-metrics.js';
import { judge, spanOf } from '../analyze/probes/judge.js';
import { readLivenessEvents } from '../analyze/probes/kubelet-events.js';
import { formatProbesJson, formatProbesTable, probesReport } from '../analyze/probes/probes-report.js';
import { prometheus } from '../analyze/probes/prometheus-client.js';
import { prometheusSamples } from '../analyze/probes/prometheus-samples.js';
import type { Samples } from '../analyze/probes/samples.js';
import { readProbeInventory } from '../analyze/probes/workload-probes.js';
import { HealthcheckError } from '../errors.js';
import { badFlagValue, usageError } from '../flags.js';

export const PROBES_FLAGS = {
  probes: { type: 'boolean' },
  prometheus: { type: 'string' },
  'prometheus-token-file': { type: 'string' },
  'prometheus-user': { type: 'string' },
  'prometheus-password-file': { type: 'string' },
  'prometheus-ca-file': { type: 'string' },
  'companion-metrics': { type: 'string' },
  window: { type: 'string' },
  'fail-on': { type: 'string' },
} as const;

type ProbesValues = { [K in keyof typeof PROBES_FLAGS]?: K extends 'probes' ? boolean : string };

export const PROBES_USAGE = `With --probes, judges every workload's probes instead (docs/analyze.md#analyze---probes): static rules
over its pod template, live rules over kubelet's record (the pods' restarts, its events: liveness restarts need
no live source), and over what the companions saw, from --prometheus or --companion-metrics.
  --probes                 judge the probes
  --prometheus URL         the Prometheus that scrapes the companions (deploy/monitoring's PodMonitor)
  --prometheus-token-file FILE
                           its bearer token
  --prometheus-user USER   with --prometheus-password-file FILE: its basic auth
  --prometheus-password-file FILE
  --prometheus-ca-file FILE
                           the CA of its https:// certificate
  --companion-metrics N    without Prometheus: read at most N companions' /metrics through the API server's pod
                           proxy (needs get pods/proxy: docs/security.md)
  --window DURATION        the live rules' window, e.g. 30m, 1h, 6h (default 1h; 5m-7d)
  --fail-on probes         exit 1 on any probe finding (else only a liveness probe that restarted pods does)`;

const WINDOW = /^(\d+)(m|h|d)$/;

function windowSeconds(text: string): number {
  const m = WINDOW.exec(text);
  const seconds =
    m === null ? Number.NaN : Number(m[1]) * { m: 60, h: 3600, d: 86400 }[m[2] as 'm' | 'h' | 'd'];
  if (!(seconds >= 300 && seconds <= 7 * 86400))
    throw badFlagValue('--window', text, 'minutes, hours or days: 5m to 7d');
  return seconds;
}

/** Refuses the flags of --probes without it, and the combinations that cannot mean anything. */
export function checkProbesFlags(values: ProbesValues): void {
  const given = Object.keys(PROBES_FLAGS).filter(
    (f) => f !== 'probes' && values[f as keyof ProbesValues] !== undefined,
  );
  if (values.probes !== true && given.length > 0)
    throw usageError(`--${given[0]} without --probes`, 'add --probes');
  if (values.prometheus !== undefined && values['companion-metrics'] !== undefined) {
    throw usageError('--prometheus with --companion-metrics', 'one source of live data');
  }
  if ((values['prometheus-user'] === undefined) !== (values['prometheus-password-file'] === undefined)) {
    throw usageError('--prometheus-user and --prometheus-password-file', 'both, for basic auth');
  }
  if (values['fail-on'] !== undefined && values['fail-on'] !== 'probes') {
    throw badFlagValue('--fail-on', values['fail-on'], 'probes');
  }
  const n = values['companion-metrics'];
  if (n !== undefined && !(/^\d+$/.test(n) && Number(n) >= 1 && Number(n) <= 10000)) {
    throw badFlagValue('--companion-metrics', n, 'a number of companions, 1-10000');
  }
}

async function liveSamples(
  values: ProbesValues,
  client: ClusterClient,
  namespace: string | undefined,
  pods: { namespace: string; pod: string }[],
  window: number,
  timeoutMs: number,
): Promise<{ samples: Samples | undefined; notes: string[] }> {
  if (values.prometheus !== undefined) {
    const prom = prometheus({
      url: values.prometheus,
      bearerTokenFile: values['prometheus-token-file'],
      basicAuth:
        values['prometheus-user'] === undefined
          ? undefined
          : { user: values['prometheus-user'], passwordFile: values['prometheus-password-file'] ?? '' },
      caFile: values['prometheus-ca-file'],
      timeoutMs,
    });
    return {
      samples: await prometheusSamples(prom, namespace, window, Math.floor(Date.now() / 1000)),
      notes: [],
    };
  }
  if (values['companion-metrics'] !== undefined) {
    return companionSamples((path) => client.getText(path), pods, Number(values['companion-metrics']));
  }
  return {
    samples: undefined,
    notes: [
      "no live data (--prometheus URL or --companion-metrics N): static rules, and restarts from the pods' status and kubelet's events",
    ],
  };
}

export async function runProbes(
  values: ProbesValues,
  client: ClusterClient,
  namespace: string | undefined,
  json: boolean,
  timeoutMs: number,
): Promise<void> {
  const window = windowSeconds(values.window ?? '1h');
  const list = (path: string, each: Parameters<typeof eachItem>[2], metadataOnly = false) =>
    eachItem(client, path, each, { metadataOnly });
  const since = Date.now() - window * 1000;
  const inventory = await readProbeInventory(list, namespace, since);
  const { events, refused: eventsRefused } = await readLivenessEvents(list, namespace, since);
  const withCompanion = inventory.workloads
    .filter((w) => w.probes.companion)
    .flatMap((w) => w.pods.map((pod) => ({ namespace: w.namespace, pod })));
  const { samples, notes } = await liveSamples(values, client, namespace, withCompanion, window, timeoutMs);
  const judged = judge(
    inventory.workloads,
    { containers: inventory.containers, events, eventsRefused },
    samples,
    Date.now(),
  );
  const span = samples === undefined ? undefined : spanOf(samples);
  const report = probesReport(judged.workloads, samples?.source, span, [
    ...inventory.refused,
    ...(eventsRefused === undefined ? [] : [eventsRefused]),
    ...notes,
    ...judged.notes,
  ]);
  process.stdout.write(json ? formatProbesJson(report) : formatProbesTable(report));
  if (report.needsAction || (values['fail-on'] === 'probes' && report.findings > 0)) {
    throw new HealthcheckError(
      'OSM_HC_ANALYZE',
      report.needsAction
        ? 'a liveness probe restarted pods within the window'
        : `${report.findings} probe finding(s) (--fail-on probes)`,
    );
  }
}
