// What `analyze --pre` prints: the cluster, the checks before install as a table (one line each, the namespace
// first where it is about one), and whether anything stands in the install's way; or the same as JSON.

import type { PreReport } from './pre.js';
import { table } from './report.js';

export function formatPreTable(report: PreReport): string {
  const lines: string[] = [
    `CLUSTER   ${report.cluster.server} (context ${report.cluster.context}), Kubernetes ${report.cluster.version}`,
    `BEFORE INSTALL, ${report.scope}: namespaces chosen by ${report.selector.query === '' ? 'an empty namespaceSelector (every namespace)' : `the namespaceSelector ${report.selector.query}`}, ${report.selector.source}`,
    '',
    ...table([['CHECK', 'STATUS', 'DETAIL'], ...report.checks.map((c) => [c.name, c.status, c.detail])]),
    '',
  ];
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  const cannot = report.checks.filter((c) => c.status === 'skip').length;
  const unchecked =
    cannot === 0 ? '' : ` (${cannot} check${cannot === 1 ? '' : 's'} could not be made: see skip)`;
  lines.push(
    failed > 0
      ? `Needs action before install: ${failed} failed check${failed === 1 ? '' : 's'}${unchecked}.`
      : `Nothing stands in the install's way${unchecked}.`,
  );
  return `${lines.join('\n')}\n`;
}

export function formatPreJson(report: PreReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
