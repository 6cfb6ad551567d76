// check's output, pinned: the readable table (direct and through the companion), the JSON shape docs/check.md
// documents, and the one-line summary.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type CheckRow, formatJson, formatTable, passed, summary } from '../../src/check/report.js';
import { DEFAULT_PORTS } from '../../src/scheme.js';
import { ROOT } from '../helpers/cli.js';

const OK: CheckRow = {
  kind: 'liveness',
  container: 'app',
  handler: 'httpGet',
  target: 'HTTP :8080/live',
  via: null,
  verdict: 'success',
  status: 200,
  ms: 3,
  budgetMs: 900,
  reason: 'GET http://127.0.0.1:8080/live -> 200 in 3 ms',
  kubeletWarning: null,
};
const WARNED: CheckRow = {
  ...OK,
  kind: 'readiness',
  verdict: 'warning',
  status: 302,
  reason:
    'GET http://127.0.0.1:8080/live -> 302 (redirect to http://other/ not followed: other host) in 2 ms',
  kubeletWarning: 'Probe terminated redirects, Response body: <a href="http://other/">Found</a>.\n\n',
};
const FAILED: CheckRow = {
  kind: 'readiness',
  container: 'db',
  handler: 'tcpSocket',
  target: 'tcp :5432',
  via: null,
  verdict: 'failure',
  status: 503,
  ms: 1,
  budgetMs: 1900,
  reason: 'tcp 127.0.0.1:5432 failed: connect ECONNREFUSED 127.0.0.1:5432 after 1 ms',
  kubeletWarning: null,
};

describe('summary and passed', () => {
  it.each([
    { name: 'one success', rows: [OK], text: 'the probe passed', pass: true },
    { name: 'warnings pass', rows: [OK, WARNED], text: 'all 2 probes passed (1 with a warning)', pass: true },
    {
      name: 'a failure',
      rows: [OK, FAILED, WARNED],
      text: '1 of 3 probes failed: readiness db',
      pass: false,
    },
    {
      name: 'several failures',
      rows: [FAILED, { ...FAILED, kind: 'liveness' as const }],
      text: '2 of 2 probes failed: readiness db, liveness db',
      pass: false,
    },
  ])('$name', ({ rows, text, pass }) => {
    expect(summary(rows)).toBe(text);
    expect(passed(rows)).toBe(pass);
  });
});

describe('formatTable', () => {
  it('lines the columns up, the reason last, with a heading and a summary', () => {
    expect(formatTable({ host: '10.1.2.3', companionPorts: null, rows: [OK, FAILED] })).toBe(
      [
        '2 probes run from here against 10.1.2.3, as the companion runs them',
        '',
        'KIND       CONTAINER  TARGET           VERDICT  STATUS  TIME            REASON',
        'liveness   app        HTTP :8080/live  Success  200     3 ms / 900 ms   GET http://127.0.0.1:8080/live -> 200 in 3 ms',
        'readiness  db         tcp :5432        Failure  503     1 ms / 1900 ms  tcp 127.0.0.1:5432 failed: connect ECONNREFUSED 127.0.0.1:5432 after 1 ms',
        '',
        '1 of 2 probes failed: readiness db',
        '',
      ].join('\n'),
    );
  });

  it("a Warning: the reason, then kubelet's own text quoted on the same line", () => {
    const lines = formatTable({ host: '10.1.2.3', companionPorts: null, rows: [WARNED] }).split('\n');
    expect(lines[3]).toBe(
      'readiness  app        HTTP :8080/live  Warning  302     3 ms / 900 ms  ' +
        'GET http://127.0.0.1:8080/live -> 302 (redirect to http://other/ not followed: other host) in 2 ms; ' +
        'kubelet: "Probe terminated redirects, Response body: <a href=\\"http://other/\\">Found</a>.\\n\\n"',
    );
  });

  it("cuts kubelet's text of a long body in the table", () => {
    const long = {
      ...WARNED,
      kubeletWarning: `Probe terminated redirects, Response body: ${'é'.repeat(10_240)}`,
    };
    const line = formatTable({ host: '10.1.2.3', companionPorts: null, rows: [long] }).split('\n')[3] ?? '';
    expect(line.endsWith(`${'é'.repeat(200 - 43)}…"`)).toBe(true);
  });

  it('through the companion: what was sent where, and "-" for no answer', () => {
    const rows: CheckRow[] = [
      {
        ...OK,
        via: { port: 15901, path: '/osm-liveness-probe/app', headers: [] },
        budgetMs: 1000,
        reason: 'liveness app: GET http://127.0.0.1:8080/live -> 200 in 3 ms',
      },
      {
        ...FAILED,
        via: {
          port: 15904,
          path: '/osm-healthcheck',
          headers: [{ name: 'Original-Tcp-Port', value: '5432' }],
        },
        status: null,
        budgetMs: 2000,
        reason: 'GET http://127.0.0.1:15904/osm-healthcheck failed: connect ECONNREFUSED 127.0.0.1:15904',
      },
    ];
    expect(formatTable({ host: '127.0.0.1', companionPorts: DEFAULT_PORTS, rows }).split('\n')).toEqual([
      '2 probes sent through the companion at 127.0.0.1 (ports 15901,15902,15903,15904), as kubelet sends them',
      '',
      'KIND       CONTAINER  TARGET           VIA                                             VERDICT  STATUS  TIME            REASON',
      'liveness   app        HTTP :8080/live  :15901/osm-liveness-probe/app                   Success  200     3 ms / 1000 ms  liveness app: GET http://127.0.0.1:8080/live -> 200 in 3 ms',
      'readiness  db         tcp :5432        :15904/osm-healthcheck Original-Tcp-Port: 5432  Failure  -       1 ms / 2000 ms  GET http://127.0.0.1:15904/osm-healthcheck failed: connect ECONNREFUSED 127.0.0.1:15904',
      '',
      '1 of 2 probes failed: readiness db',
      '',
    ]);
  });
});

describe('formatJson', () => {
  it('has the documented shape', () => {
    expect(JSON.parse(formatJson({ host: '127.0.0.1', companionPorts: null, rows: [OK, WARNED] }))).toEqual({
      host: '127.0.0.1',
      viaCompanion: false,
      companionPorts: null,
      passed: true,
      probes: [
        {
          kind: 'liveness',
          container: 'app',
          handler: 'httpGet',
          target: 'HTTP :8080/live',
          via: null,
          verdict: 'success',
          status: 200,
          ms: 3,
          budgetMs: 900,
          reason: 'GET http://127.0.0.1:8080/live -> 200 in 3 ms',
          kubeletWarning: null,
        },
        expect.objectContaining({
          kind: 'readiness',
          verdict: 'warning',
          status: 302,
          kubeletWarning: 'Probe terminated redirects, Response body: <a href="http://other/">Found</a>.\n\n',
        }),
      ],
    });
  });

  it('through the companion: its ports, and the GET sent for each probe', () => {
    const via = {
      port: 15904,
      path: '/osm-healthcheck',
      headers: [{ name: 'Original-Tcp-Port', value: '5432' }],
    };
    const json = JSON.parse(
      formatJson({ host: '127.0.0.1', companionPorts: DEFAULT_PORTS, rows: [{ ...FAILED, via }] }),
    );
    expect(json).toMatchObject({
      viaCompanion: true,
      companionPorts: { liveness: 15901, readiness: 15902, startup: 15903, healthcheck: 15904 },
      passed: false,
      probes: [{ via }],
    });
  });
});

describe('docs/check.md', () => {
  const page = readFileSync(`${ROOT}docs/check.md`, 'utf8');
  const example = /\$ osm-healthcheck check [^\n]*-o json\n(\{\n[\s\S]*?\n\})\n/.exec(page)?.[1];

  it('shows -o json exactly as formatJson prints it', () => {
    expect(example).toBeDefined();
    const shown = JSON.parse(example ?? '');
    const rows: CheckRow[] = shown.probes;
    const printed = formatJson({ host: shown.host, companionPorts: shown.companionPorts, rows });
    expect(`${example}\n`).toBe(printed);
  });

  it('explains every field of the JSON in its table', () => {
    const json = JSON.parse(formatJson({ host: '127.0.0.1', companionPorts: null, rows: [OK] }));
    const fields = [
      ...Object.keys(json).filter((k) => k !== 'probes'),
      ...Object.keys(json.probes[0]).map((k) => `probes[].${k}`),
    ];
    // A row's first cell names fields: `probes[].ms`, `.budgetMs` (the same prefix) or `viaCompanion`, `companionPorts`.
    const documented = page.split('\n').flatMap((line) => {
      const cell = /^\| (`[^|]*`) \|/.exec(line)?.[1];
      if (cell === undefined) return [];
      const names = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
      const prefix = names[0]?.startsWith('probes[].') ? 'probes[]' : '';
      return names.map((name) => (name.startsWith('.') ? `${prefix}${name}` : name));
    });
    expect(fields.filter((field) => !documented.includes(field))).toEqual([]);
  });
});
