// Runs the selected entries once, all at once, each within its own timeout: directly with the companion's own
// prober and budget (what serve does for kubelet), or through the companion's ports (what kubelet does).

import { performance } from 'node:perf_hooks';
import { kubeletWarning } from '../probe/http-outcome.js';
import { probeBudgetMs } from '../probe/result.js';
import { preloadProbers, runProbe } from '../probe/run.js';
import { type CompanionGet, kindProbeGet, type ListenerRole, tcpProbeGet } from '../scheme.js';
import { describeHandler } from '../table/describe.js';
import type { ProbeEntry } from '../table/types.js';
import { askCompanion } from './companion-get.js';
import type { CheckRow } from './report.js';

/** The rewritten probe kubelet sends for this entry (docs/architecture.md#the-rewrite, as inject writes it). */
function rewritten(entry: ProbeEntry, ports: Readonly<Record<ListenerRole, number>>): CompanionGet {
  return entry.handler.type === 'tcpSocket'
    ? tcpProbeGet(entry.handler.port, ports)
    : kindProbeGet(entry.kind, entry.container, ports);
}

function row(entry: ProbeEntry): Pick<CheckRow, 'kind' | 'container' | 'handler' | 'target'> {
  return {
    kind: entry.kind,
    container: entry.container,
    handler: entry.handler.type,
    target: describeHandler(entry.handler),
  };
}

/** Each entry with serve's prober, serve's budget and serve's target host. */
export async function runDirect(entries: readonly ProbeEntry[], host: string): Promise<CheckRow[]> {
  // As serve does at start-up: no probe's budget pays for loading gRPC or TLS.
  await preloadProbers(entries.map((e) => e.handler));
  return Promise.all(
    entries.map(async (entry) => {
      const budgetMs = probeBudgetMs(entry.timeoutSeconds);
      const started = performance.now();
      const result = await runProbe(entry.handler, { host, timeoutMs: budgetMs });
      const ms = Math.round(performance.now() - started);
      const { verdict, status, message } = result;
      const warning = result.verdict === 'warning' ? kubeletWarning(result.appBody.bytes) : null;
      return {
        ...row(entry),
        via: null,
        verdict,
        status,
        ms,
        budgetMs,
        reason: message,
        kubeletWarning: warning,
      };
    }),
  );
}

/** Each entry's rewritten probe sent to the companion, within kubelet's own timeout (timeoutSeconds). */
export function runViaCompanion(
  entries: readonly ProbeEntry[],
  host: string,
  ports: Readonly<Record<ListenerRole, number>>,
): Promise<CheckRow[]> {
  return Promise.all(
    entries.map(async (entry) => {
      const via = rewritten(entry, ports);
      const budgetMs = entry.timeoutSeconds * 1000;
      const started = performance.now();
      const answer = await askCompanion(host, via, budgetMs);
      const ms = Math.round(performance.now() - started);
      return { ...row(entry), via, ...answer, ms, budgetMs };
    }),
  );
}
