// What `check` prints: one row per probe as a readable table or as JSON (the shape docs/check.md documents),
// and the one-line verdict over all of them. Pure: test/check/report.test.ts pins both formats.

import type { Verdict } from '../probe/result.js';
import type { CompanionGet, ListenerRole, ProbeKind } from '../scheme.js';
import type { ProbeHandler } from '../table/types.js';

export interface CheckRow {
  kind: ProbeKind;
  container: string;
  handler: ProbeHandler['type'];
  /** The original probe, e.g. `HTTP :8080/ready` (table/describe.ts). */
  target: string;
  /** With --via-companion: the GET sent to the companion in its place; else null. */
  via: CompanionGet | null;
  verdict: Verdict;
  /** The status the companion answers (or, run directly, would answer) kubelet with; null: no answer at all. */
  status: number | null;
  ms: number;
  /** What the probe may take: the companion's budget, or with --via-companion kubelet's timeoutSeconds. */
  budgetMs: number;
  /** One line: the prober's message, or the companion's. */
  reason: string;
  /**
   * For a Warning, kubelet's own output as its ProbeWarning event shows it: `Probe terminated redirects, Response
   * body: ` and the app's body (at most 10 KiB); else null.
   */
  kubeletWarning: string | null;
}

export interface CheckReport {
  /** Where the probes went: POD_IP or 127.0.0.1. */
  host: string;
  /** With --via-companion: the companion's ports; else null. */
  companionPorts: Readonly<Record<ListenerRole, number>> | null;
  rows: readonly CheckRow[];
}

const VERDICT_WORDS: Readonly<Record<Verdict, string>> = {
  success: 'Success',
  warning: 'Warning',
  failure: 'Failure',
};

/** kubelet counts a Warning (a redirect not followed) as a pass. */
export function passed(rows: readonly CheckRow[]): boolean {
  return rows.every((row) => row.verdict !== 'failure');
}

/** `all 3 probes passed (1 with a warning)` or `1 of 3 probes failed: readiness db`. */
export function summary(rows: readonly CheckRow[]): string {
  const failed = rows.filter((row) => row.verdict === 'failure');
  const probes = rows.length === 1 ? 'probe' : 'probes';
  if (failed.length > 0) {
    const which = failed.map((row) => `${row.kind} ${row.container}`).join(', ');
    return `${failed.length} of ${rows.length} ${probes} failed: ${which}`;
  }
  const warnings = rows.filter((row) => row.verdict === 'warning').length;
  const note = warnings === 0 ? '' : ` (${warnings} with a warning)`;
  return `${rows.length === 1 ? 'the probe' : `all ${rows.length} probes`} passed${note}`;
}

/** `:15904/osm-healthcheck Original-Tcp-Port: 5432` */
function describeVia(via: CompanionGet): string {
  return [`:${via.port}${via.path}`, ...via.headers.map((h) => `${h.name}: ${h.value}`)].join(' ');
}

function heading(report: CheckReport): string {
  const { host, companionPorts, rows } = report;
  const probes = `${rows.length} ${rows.length === 1 ? 'probe' : 'probes'}`;
  if (companionPorts === null) return `${probes} run from here against ${host}, as the companion runs them`;
  const ports = Object.values(companionPorts).join(',');
  return `${probes} sent through the companion at ${host} (ports ${ports}), as kubelet sends them`;
}

/** Code points of kubelet's Warning text the table shows; `-o json` has all of it. */
const WARNING_CHARS = 200;

/** The reason, and for a Warning kubelet's text on the same line: quoted, so the app's newlines stay visible. */
function reasonCell(row: CheckRow): string {
  if (row.kubeletWarning === null) return row.reason;
  const points = Array.from(row.kubeletWarning);
  const shown =
    points.length <= WARNING_CHARS ? row.kubeletWarning : `${points.slice(0, WARNING_CHARS).join('')}…`;
  return `${row.reason}; kubelet: ${JSON.stringify(shown)}`;
}

export function formatTable(report: CheckReport): string {
  const via = report.companionPorts !== null;
  const head = [
    'KIND',
    'CONTAINER',
    'TARGET',
    ...(via ? ['VIA'] : []),
    'VERDICT',
    'STATUS',
    'TIME',
    'REASON',
  ];
  const body = report.rows.map((row) => [
    row.kind,
    row.container,
    row.target,
    ...(via && row.via !== null ? [describeVia(row.via)] : []),
    VERDICT_WORDS[row.verdict],
    row.status === null ? '-' : String(row.status),
    `${row.ms} ms / ${row.budgetMs} ms`,
    reasonCell(row),
  ]);
  const lines = [head, ...body];
  // Every column but the last (the reason) is padded to its widest cell.
  const widths = head.map((_, i) => Math.max(...lines.map((cells) => (cells[i] ?? '').length)));
  const rendered = lines.map((cells) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '),
  );
  return [heading(report), '', ...rendered, '', summary(report.rows), ''].join('\n');
}

/** The JSON shape of docs/check.md: stable, for scripts. */
export function formatJson(report: CheckReport): string {
  const json = {
    host: report.host,
    viaCompanion: report.companionPorts !== null,
    companionPorts: report.companionPorts,
    passed: passed(report.rows),
    probes: report.rows.map((row) => ({
      kind: row.kind,
      container: row.container,
      handler: row.handler,
      target: row.target,
      via: row.via,
      verdict: row.verdict,
      status: row.status,
      ms: row.ms,
      budgetMs: row.budgetMs,
      reason: row.reason,
      kubeletWarning: row.kubeletWarning,
    })),
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}
