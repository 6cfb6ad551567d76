// The PromQL of deploy/monitoring, for the tests that bind it to reality: every expression of the
// PrometheusRule and the Grafana dashboard (Grafana's $__rate_interval made a plain 5m), the metric names each
// selects, and `promtool check rules` of them all, which parses each with Prometheus' own parser.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ROOT } from './cli.js';
import { PROMTOOL_BIN } from './prometheus.js';

type Json = Record<string, unknown>;

export const MONITORING = `${ROOT}deploy/monitoring`;

export interface Query {
  /** `rule OsmHealthcheckProbesFailing`, `panel "Refusals" A`. */
  where: string;
  expr: string;
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The rule groups of deploy/monitoring/prometheusrule.yaml, as a plain Prometheus rule file holds them. */
export function ruleGroups(): Array<{ name: string; rules: AlertRule[] }> {
  const rule = parse(readFileSync(`${MONITORING}/prometheusrule.yaml`, 'utf8')) as Json;
  return (rule.spec as { groups: Array<{ name: string; rules: AlertRule[] }> }).groups;
}

export const alertRules = (): AlertRule[] => ruleGroups().flatMap((g) => g.rules);

/** Grafana's interval variables, as Prometheus would be given them. */
const GRAFANA_VARIABLES: Record<string, string> = {
  $__rate_interval: '5m',
  $__interval: '1m',
  $__range: '1h',
};

/** Every target of every panel of deploy/monitoring/dashboard.json, Grafana's variables filled in. */
export function dashboardQueries(): Query[] {
  const dashboard = JSON.parse(readFileSync(`${MONITORING}/dashboard.json`, 'utf8')) as { panels: Json[] };
  return dashboard.panels.flatMap((panel) =>
    ((panel.targets as Json[] | undefined) ?? []).map((target) => ({
      where: `panel "${String(panel.title)}" ${String(target.refId)}`,
      expr: Object.entries(GRAFANA_VARIABLES).reduce(
        (expr, [name, value]) => expr.replaceAll(name, value),
        String(target.expr),
      ),
    })),
  );
}

export function allQueries(): Query[] {
  return [...alertRules().map((r) => ({ where: `rule ${r.alert}`, expr: r.expr })), ...dashboardQueries()];
}

/** Series neither of ours exposes that the rules or the dashboard select, each with what exposes it. */
export const EXTERNAL_METRICS: Readonly<Record<string, string>> = {
  kube_pod_container_status_restarts_total: 'kube-state-metrics, pods',
  kube_pod_init_container_status_restarts_total:
    'kube-state-metrics, pods (init containers, native sidecars)',
  kube_pod_container_status_last_terminated_reason:
    'kube-state-metrics, pods (reason of the last termination)',
  kube_endpoint_address: 'kube-state-metrics 2.6+, endpoints (ready="true"|"false" per address)',
  kube_endpoint_info: 'kube-state-metrics, endpoints (one per Endpoints object)',
  apiserver_admission_webhook_fail_open_count: 'kube-apiserver, per webhook name: admitted without an answer',
  apiserver_admission_webhook_admission_duration_seconds_bucket:
    'kube-apiserver, per webhook name: the round trip of a call',
};

/** The names of the series in a text exposition (`name{...} value`, `name value`). */
export function exposedNames(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((line) => /^[a-zA-Z_:]/.test(line))
      .map((line) => /^[a-zA-Z_:][\w:]*/.exec(line)?.[0] ?? ''),
  );
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2']);

/**
 * The metric names an expression selects: every identifier that is not a function or aggregation (followed by
 * `(`), a keyword, a label inside `{...}` or a grouping list, a string, a duration or a number.
 */
export function metricNames(expr: string): string[] {
  const plain = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b(group_left|group_right)\b/g, ' ')
    .replace(/\boffset\s+-?[0-9a-z]+/g, ' ');
  const names = new Set<string>();
  for (const match of plain.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, name = '', call] = match;
    if (call === undefined && !KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names].sort();
}

/** `promtool check rules` of every query as a recording rule: exit code and output. */
export function checkQueries(queries: readonly Query[]): { code: number | null; output: string } {
  if (PROMTOOL_BIN === undefined) throw new Error('promtool is not on PATH: apt-get install prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-promql-'));
  try {
    const file = join(dir, 'queries.yaml');
    const rules = queries.map((q, i) => ({ record: `osm_hc_query:${i}`, expr: q.expr }));
    writeFileSync(file, stringify({ groups: [{ name: 'queries', rules }] }));
    const run = spawnSync(PROMTOOL_BIN, ['check', 'rules', file], { encoding: 'utf8', timeout: 20_000 });
    return { code: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
