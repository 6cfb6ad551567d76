// What analyze prints: the table a person reads (the fixes last, the verdict in the last line) and the JSON.

import { describe, expect, it } from 'vitest';
import type { Group } from '../../src/analyze/data-plane.js';
import { formatJson, formatTable, type Report, reportNeedsAction } from '../../src/analyze/report.js';

const group = (fields: Partial<Group>): Group => ({
  namespace: 'shop',
  kind: 'Deployment',
  name: 'web',
  class: 'covered',
  detail: '0.1.0, osm-healthcheck:0.1.0, first container, init-container',
  pods: ['web-1'],
  needsAction: false,
  ...fields,
});

const REPORT: Report = {
  cluster: { server: 'https://127.0.0.1:6443', context: 'kind', version: 'v1.36.3' },
  current: {
    image: 'osm-healthcheck:0.1.0',
    version: '0.1.0',
    source: 'the dry run: what the live webhook wrote',
  },
  scope: 'all namespaces',
  checks: [{ section: 'install', name: 'dry-run', status: 'ok', detail: 'injected' }],
  namespaces: [{ name: 'shop', selected: true, podSecurity: 'restricted' }],
  counts: { covered: 1, stale: 0, uncovered: 2, untouched: 1, failing: 0 },
  finished: 3,
  groups: [
    group({}),
    group({
      name: 'api',
      class: 'uncovered',
      detail: 'no companion',
      pods: ['api-1', 'api-2'],
      needsAction: true,
      fix: 'kubectl -n shop rollout restart deployment/api',
    }),
    group({
      kind: 'Pod',
      name: 'debug',
      class: 'untouched',
      reason: 'opted-out',
      detail: 'osm-healthcheck/rewrite-probes: "false"',
    }),
  ],
  needsAction: true,
  tableless: [],
};

describe('formatTable', () => {
  it('the cluster, the checks, the namespaces, the counts, the groups but covered, the fixes, the verdict', () => {
    expect(formatTable(REPORT, false)).toBe(
      [
        'CLUSTER   https://127.0.0.1:6443 (context kind), Kubernetes v1.36.3',
        'CURRENT   a pod created now gets osm-healthcheck:0.1.0 (release 0.1.0; the dry run: what the live webhook wrote)',
        '',
        'CHECK    STATUS  DETAIL',
        'dry-run  ok      injected',
        '',
        'NAMESPACES  1 labelled for injection: shop (restricted)',
        'PODS        1 covered, 0 stale, 2 uncovered, 1 untouched, 0 failing (3 finished or deleting, not counted)',
        '',
        'NAMESPACE  WORKLOAD        PODS  CLASS      WHY',
        'shop       Deployment/api  2     uncovered  no companion',
        'shop       Pod/debug       1     untouched  opted-out: osm-healthcheck/rewrite-probes: "false"',
        '',
        'TO FIX (1 workload, 2 pods):',
        '  kubectl -n shop rollout restart deployment/api',
        '',
        'Needs action: 2 pods to restart or look at.',
        '',
      ].join('\n'),
    );
  });

  it('--show-covered lists covered workloads too; nothing to do says so', () => {
    const calm = { ...REPORT, groups: [group({})], checks: [], needsAction: false };
    const text = formatTable(calm, true);
    expect(text).toMatch(/^shop +Deployment\/web +1 +covered/m);
    expect(text.trimEnd().split('\n').at(-1)).toBe('Nothing needs action.');
    expect(formatTable({ ...calm, namespaces: [] }, false)).toContain(
      'NAMESPACES  none labelled for injection in all namespaces',
    );
  });
});

describe('companions without a probe table', () => {
  const tableless = [
    {
      namespace: 'bookstore',
      kind: 'Deployment',
      name: 'bookstore',
      container: 'osm-healthcheck',
      allowedPorts: null,
      pods: ['b-1', 'b-2'],
    },
    {
      namespace: 'shop',
      kind: 'Pod',
      name: 'legacy',
      container: 'osm-healthcheck',
      allowedPorts: '8080,9000-9010',
      pods: ['legacy'],
    },
  ];

  it('a section by workload saying what any pod can have each probe, before the fixes; the verdict unchanged', () => {
    const text = formatTable({ ...REPORT, tableless }, false);
    const lines = text.split('\n');
    const at = lines.indexOf(
      "COMPANIONS WITHOUT A PROBE TABLE (osm-edge's contract: any pod can have them probe these ports on the pod's address)",
    );
    expect(at).toBeGreaterThan(lines.indexOf('NAMESPACE  WORKLOAD        PODS  CLASS      WHY'));
    expect(lines.slice(at + 1, at + 4)).toEqual([
      'NAMESPACE  WORKLOAD              PODS  CONTAINER        REACHES',
      'bookstore  Deployment/bookstore  2     osm-healthcheck  any port, any path',
      'shop       Pod/legacy            1     osm-healthcheck  ports 8080,9000-9010 (--allowed-ports), any path',
    ]);
    expect(lines[at + 5]).toBe('TO FIX (1 workload, 2 pods):');
    const calm = { ...REPORT, groups: [group({})], checks: [], needsAction: false, tableless };
    expect(formatTable(calm, false).trimEnd().split('\n').at(-1)).toBe('Nothing needs action.');
  });

  it('none: no section; JSON carries them as they are, after every other field', () => {
    expect(formatTable(REPORT, false)).not.toContain('WITHOUT A PROBE TABLE');
    const json = formatJson({ ...REPORT, tableless });
    expect(JSON.parse(json).tableless).toEqual(tableless);
    expect(Object.keys(JSON.parse(json)).at(-1)).toBe('tableless');
  });
});

describe('formatJson and reportNeedsAction', () => {
  it('JSON is the report itself', () => {
    expect(JSON.parse(formatJson(REPORT))).toEqual(REPORT);
  });

  it('a failed check or a group to act on needs action; warnings and skips do not', () => {
    const warn = [{ section: 'install' as const, name: 'x', status: 'warn' as const, detail: '' }];
    expect(reportNeedsAction(warn, [group({})])).toBe(false);
    expect(reportNeedsAction([{ ...warn[0], status: 'skip' } as never], [])).toBe(false);
    expect(reportNeedsAction([{ ...warn[0], status: 'fail' } as never], [])).toBe(true);
    expect(reportNeedsAction([], [group({ needsAction: true })])).toBe(true);
  });
});
