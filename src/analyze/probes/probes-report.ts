// What `analyze --probes` prints: per workload with findings, one row per finding (rule, probe, evidence), then
// each fix; or JSON with a stable shape for scripts (docs/analyze.md#probes-output). Pure.

import { table } from '../report.js';
import type { WorkloadFindings } from './judge.js';

export interface ProbesReport {
  /** Where the live data came from, or undefined where only the static rules ran. */
  source: string | undefined;
  /** `over the last 1h`, `since each companion started`; undefined with no live data. */
  span: string | undefined;
  /** Said once: why no live rule ran, or what the source cannot show. */
  notes: string[];
  workloads: WorkloadFindings[];
  /** A liveness probe restarted pods within the window (exit 1 whatever --fail-on says). */
  needsAction: boolean;
  /** Findings of any kind. */
  findings: number;
}

export function probesReport(
  workloads: WorkloadFindings[],
  source: string | undefined,
  span: string | undefined,
  notes: string[],
): ProbesReport {
  const all = workloads.flatMap((w) => w.findings);
  return {
    source,
    span,
    notes,
    workloads,
    needsAction: all.some((f) => f.needsAction),
    findings: all.length,
  };
}

export function formatProbesTable(report: ProbesReport): string {
  const lines = [
    report.source === undefined
      ? "PROBES    static rules, and restarts from kubelet's record (the pods' status, its events)"
      : `PROBES    static rules, kubelet's record, and live rules from ${report.source} ${report.span ?? ''}`.trimEnd(),
    ...report.notes.map((n) => `NOTE      ${n}`),
  ];
  const judged = report.workloads.length;
  const faulty = report.workloads.filter((w) => w.findings.length > 0);
  lines.push(`WORKLOADS ${judged} judged, ${faulty.length} with findings`);
  if (faulty.length > 0) {
    const rows = faulty.flatMap((w) =>
      w.findings.map((f) => [
        w.namespace,
        `${w.kind}/${w.name}`,
        f.rule,
        `${f.container}/${f.kind}`,
        f.evidence,
      ]),
    );
    lines.push('', ...table([['NAMESPACE', 'WORKLOAD', 'RULE', 'PROBE', 'EVIDENCE'], ...rows]));
    // One fix per workload: the user applies one patch, which makes every finding's change.
    lines.push('', 'TO FIX:');
    for (const w of faulty) {
      lines.push(`  ${w.namespace} ${w.kind}/${w.name}`);
      for (const f of w.findings) lines.push(`    ${f.rule} (${f.container}): ${f.advice}`);
      if (w.fix !== undefined) lines.push(...w.fix.split('\n').map((l) => `    ${l}`));
    }
  }
  const restarts = faulty.flatMap((w) => w.findings).filter((f) => f.needsAction).length;
  lines.push(
    '',
    restarts > 0
      ? `Needs action: ${restarts} liveness probe${restarts === 1 ? '' : 's'} restarted pods ${report.span ?? ''}.`.replace(
          ' .',
          '.',
        )
      : report.findings > 0
        ? `Advice: ${report.findings} finding${report.findings === 1 ? '' : 's'} (--fail-on probes makes them fail the run).`
        : 'No probe findings.',
  );
  return `${lines.join('\n')}\n`;
}

export function formatProbesJson(report: ProbesReport): string {
  const { source, span, notes, findings, needsAction } = report;
  // Every field present (null where there is no value): scripts read a stable shape (docs/analyze.md).
  const workloads = report.workloads.map((w) => ({
    ...w,
    findings: w.findings.map((f) => ({ ...f, change: f.change ?? null, fix: f.fix ?? null })),
    fix: w.fix ?? null,
  }));
  const shape = { source: source ?? null, span: span ?? null, notes, findings, needsAction, workloads };
  return `${JSON.stringify(shape, null, 2)}\n`;
}
