// What `analyze` prints: a table a person reads (kubectl's and `istioctl proxy-status`'s habit: one row per
// workload and class, then the commands that fix them) or JSON with a stable shape for scripts
// (docs/analyze.md#output). Pure: test/analyze/report.test.ts pins both.

import type { Check } from './checks.js';
import type { ClassName } from './classify.js';
import type { Group, NamespaceView } from './data-plane.js';
import { type SealReport, sealSection } from './seal.js';
import { reachOf, type TablelessGroup } from './tableless.js';

export interface Report {
  cluster: { server: string; context: string; version: string };
  /** What a pod created now gets, and where that was learnt. */
  current: { image: string | null; version: string; source: string };
  /** `all namespaces`, or the one namespace. */
  scope: string;
  checks: Check[];
  namespaces: NamespaceView[];
  counts: Record<ClassName, number>;
  finished: number;
  groups: Group[];
  needsAction: boolean;
  /** Companions serving without a probe table, by workload: osm-edge's contract, so never in needsAction. */
  tableless: TablelessGroup[];
  /** The sealed mode per node, where any pod asked for it: listed, never in needsAction. */
  seal?: SealReport;
}

/** Nothing needs action: no failed check, no pod that is stale, uncovered, failing or unreadable to the webhook. */
export function reportNeedsAction(checks: readonly Check[], groups: readonly Group[]): boolean {
  return checks.some((c) => c.status === 'fail') || groups.some((g) => g.needsAction);
}

export function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

const podsOf = (groups: readonly Group[]) => groups.reduce((n, g) => n + g.pods.length, 0);

/** `12 covered, 3 stale, ...`. */
export function countsLine(counts: Record<ClassName, number>): string {
  return Object.entries(counts)
    .map(([name, count]) => `${count} ${name}`)
    .join(', ');
}

export function formatTable(report: Report, showCovered: boolean): string {
  const lines: string[] = [];
  lines.push(
    `CLUSTER   ${report.cluster.server} (context ${report.cluster.context}), Kubernetes ${report.cluster.version}`,
  );
  lines.push(
    `CURRENT   a pod created now gets ${report.current.image ?? 'the companion'} (release ${report.current.version}; ${report.current.source})`,
  );
  if (report.checks.length > 0) {
    lines.push(
      '',
      ...table([['CHECK', 'STATUS', 'DETAIL'], ...report.checks.map((c) => [c.name, c.status, c.detail])]),
    );
  }
  const labelled = report.namespaces.map((n) => `${n.name} (${n.podSecurity})`);
  lines.push(
    '',
    `NAMESPACES  ${labelled.length === 0 ? `none labelled for injection in ${report.scope}` : `${labelled.length} labelled for injection: ${labelled.join(', ')}`}`,
  );
  const finished = report.finished === 0 ? '' : ` (${report.finished} finished or deleting, not counted)`;
  lines.push(`PODS        ${countsLine(report.counts)}${finished}`);
  const shown = report.groups.filter((g) => showCovered || g.class !== 'covered');
  if (shown.length > 0) {
    const rows = shown.map((g) => [
      g.namespace,
      `${g.kind}/${g.name}`,
      String(g.pods.length),
      g.class,
      g.reason === undefined ? g.detail : `${g.reason}: ${g.detail}`,
    ]);
    lines.push('', ...table([['NAMESPACE', 'WORKLOAD', 'PODS', 'CLASS', 'WHY'], ...rows]));
  }
  lines.push(...tablelessSection(report.tableless));
  if (report.seal !== undefined) lines.push(...sealSection(report.seal, table));
  const fixes = report.groups.filter((g) => g.needsAction);
  if (fixes.length > 0) {
    lines.push(
      '',
      `TO FIX (${fixes.length} workload${fixes.length === 1 ? '' : 's'}, ${podsOf(fixes)} pod${podsOf(fixes) === 1 ? '' : 's'}):`,
    );
    for (const g of fixes) lines.push(`  ${g.fix ?? `${g.kind}/${g.name} in ${g.namespace}: ${g.detail}`}`);
  }
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  lines.push(
    '',
    report.needsAction
      ? `Needs action: ${[failed > 0 ? `${failed} failed check${failed === 1 ? '' : 's'}` : '', fixes.length > 0 ? `${podsOf(fixes)} pod${podsOf(fixes) === 1 ? '' : 's'} to restart or look at` : ''].filter(Boolean).join(', ')}.`
      : 'Nothing needs action.',
  );
  return `${lines.join('\n')}\n`;
}

/** What any pod can have these companions probe: shown, not counted as action (docs/analyze.md#output). */
function tablelessSection(groups: readonly TablelessGroup[]): string[] {
  if (groups.length === 0) return [];
  const rows = groups.map((g) => [
    g.namespace,
    `${g.kind}/${g.name}`,
    String(g.pods.length),
    g.container,
    reachOf(g.allowedPorts),
  ]);
  return [
    '',
    "COMPANIONS WITHOUT A PROBE TABLE (osm-edge's contract: any pod can have them probe these ports on the pod's address)",
    ...table([['NAMESPACE', 'WORKLOAD', 'PODS', 'CONTAINER', 'REACHES'], ...rows]),
  ];
}

export function formatJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
