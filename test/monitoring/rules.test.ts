// deploy/monitoring/prometheusrule.yaml with promtool: `check rules` accepts it, and `test rules` runs
// test/fixtures/monitoring/alerts.test.yaml, in which every alert fires on some synthetic series (with its labels
// and rendered annotations) and stays silent on others. Every alert says how bad it is, what happened, and where
// its runbook is: a heading of docs/monitoring.md that says what it means and what to do.

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ROOT } from '../helpers/cli.js';
import { anchors } from '../helpers/markdown.js';
import { PROMTOOL_BIN, skipWithoutPrometheus } from '../helpers/prometheus.js';
import { alertRules, ruleGroups } from '../helpers/promql.js';

const UNIT_TESTS = new URL('../fixtures/monitoring/alerts.test.yaml', import.meta.url);
const RUNBOOKS = 'docs/monitoring.md';

type UnitTest = { name: string; alert_rule_test: Array<{ alertname: string; exp_alerts?: unknown[] }> };
const unitTests = (parse(readFileSync(UNIT_TESTS, 'utf8')) as { tests: UnitTest[] }).tests;

describe('deploy/monitoring/prometheusrule.yaml', () => {
  const alerts = alertRules();

  it('has the alerts the docs describe, each named once', () => {
    const names = alerts.map((a) => a.alert);
    expect(names.length).toBeGreaterThanOrEqual(9);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(alerts.map((a) => ({ name: a.alert, rule: a })))(
    '$name: a severity, a summary, a description and a runbook in docs/monitoring.md',
    ({ name, rule }) => {
      expect(['warning', 'critical']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toMatch(/\.$/);
      expect(rule.annotations?.description?.length).toBeGreaterThan(40);
      const anchor = name.toLowerCase();
      expect(rule.annotations?.runbook_url).toBe(`${RUNBOOKS}#${anchor}`);
      const page = readFileSync(join(ROOT, RUNBOOKS), 'utf8');
      expect([...anchors(page)]).toContain(anchor);
      const section = page.slice(page.indexOf(`### ${name}`)).split(/\n### /)[0] ?? '';
      expect(section, `${name}'s runbook`).toMatch(/\*\*What it means\.\*\*/);
      expect(section, `${name}'s runbook`).toMatch(/\*\*What to do\.\*\*/);
    },
  );

  it.each(alerts.map((a) => a.alert))(
    '%s has a unit test where it fires and one where it stays silent',
    (name) => {
      const evaluations = unitTests.flatMap((t) => t.alert_rule_test.filter((e) => e.alertname === name));
      expect(
        evaluations.some((e) => (e.exp_alerts ?? []).length > 0),
        'fires',
      ).toBe(true);
      expect(
        evaluations.some((e) => (e.exp_alerts ?? []).length === 0),
        'silent',
      ).toBe(true);
    },
  );
});

describe.skipIf(skipWithoutPrometheus('test/monitoring/rules.test.ts'))('promtool', () => {
  let dir: string;
  const promtool = (...args: string[]) => {
    const run = spawnSync(PROMTOOL_BIN ?? 'promtool', args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    return { code: run.status, output: `${run.stdout}${run.stderr}` };
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'osm-hc-rules-'));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: ruleGroups() }));
    copyFileSync(UNIT_TESTS, join(dir, 'alerts.test.yaml'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('check rules accepts the rules', () => {
    const { code, output } = promtool('check', 'rules', 'rules.yaml');
    expect(output).toContain(`SUCCESS: ${alertRules().length} rules found`);
    expect(code).toBe(0);
  });

  it('test rules passes every unit test', () => {
    const { code, output } = promtool('test', 'rules', 'alerts.test.yaml');
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
  });

  it('test rules fails when an alert no longer fires as its test expects (a threshold moved)', () => {
    const moved = ruleGroups().map((g) => ({
      ...g,
      rules: g.rules.map((r) =>
        r.alert === 'OsmHealthcheckWebhookCertificateExpiring'
          ? { ...r, expr: r.expr.replace('7 * 86400', '86400') }
          : r,
      ),
    }));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: moved }));
    try {
      const { code, output } = promtool('test', 'rules', 'alerts.test.yaml');
      expect(code).not.toBe(0);
      expect(output).toContain('OsmHealthcheckWebhookCertificateExpiring');
    } finally {
      writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: ruleGroups() }));
    }
  });
});
