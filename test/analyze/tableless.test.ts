// tablelessCompanions, table by table: which containers are our companion serving without a probe table, and what
// they let any caller reach; over osm-edge's injected pod (../shared/mesh-goldens) with our image in its
// healthcheck container, as osm-edge's injector writes it (pkg/injector/healthcheck.go).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  groupTableless,
  imageRepository,
  reachOf,
  sortedTableless,
  type TablelessGroup,
  tablelessCompanions,
} from '../../src/analyze/tableless.js';
import { DEFAULT_IMAGE } from '../../src/rewrite/companion.js';
import { file, skipWithout } from '../helpers/system-tools.js';

type Json = Record<string, unknown>;

const OURS = 'registry.example.com/osm-healthcheck:0.1.0';
const GOLDEN = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'shared',
  'mesh-goldens',
  'osm-edge',
  'bookstore-http.v1.3.9.injected.yaml',
);
const NEED = file(GOLDEN, "osm-edge's injected pod (../shared/mesh-goldens)");

/** osm-edge's healthcheck container (getHealthcheckContainerSpec), with `image`. */
const healthcheck = (image: string, extra: Json = {}): Json => ({
  name: 'osm-healthcheck',
  image,
  imagePullPolicy: 'IfNotPresent',
  command: ['/osm-healthcheck'],
  args: ['--verbosity', 'info'],
  ports: [{ containerPort: 15904 }],
  ...extra,
});

const pod = (...containers: Json[]): Json => ({
  metadata: { name: 'p', namespace: 'shop' },
  spec: { containers: [{ name: 'app', image: 'app:1' }, ...containers] },
});

describe.skipIf(skipWithout('tableless over the osm-edge golden', [NEED]))('an osm-edge-injected pod', () => {
  const golden = () => parse(readFileSync(GOLDEN, 'utf8')) as Json;
  const withHealthcheck = (image: string) => {
    const p = golden();
    const spec = p.spec as { containers: Json[] };
    spec.containers.push(healthcheck(image));
    return p;
  };

  it('as injected (no healthcheck container): nothing', () => {
    expect(tablelessCompanions(golden(), [OURS, DEFAULT_IMAGE])).toEqual([]);
  });

  it('its healthcheck container on our image, any tag or digest: listed, any port, any path', () => {
    for (const image of [
      OURS,
      'registry.example.com/osm-healthcheck:0.0.9',
      'registry.example.com/osm-healthcheck@sha256:ab',
    ]) {
      expect(tablelessCompanions(withHealthcheck(image), [OURS])).toEqual([
        { container: 'osm-healthcheck', allowedPorts: null },
      ]);
    }
  });

  it("on osm-edge's own image, or another registry's: not ours, not listed", () => {
    for (const image of ['flomesh/osm-edge-healthcheck:v1.3.9', 'other.example.com/osm-healthcheck:0.1.0']) {
      expect(tablelessCompanions(withHealthcheck(image), [OURS, DEFAULT_IMAGE])).toEqual([]);
    }
  });
});

describe('tablelessCompanions', () => {
  const cases: [string, Json, string | null | undefined][] = [
    ['plain serve, nothing given', { name: 'c', image: OURS }, null],
    ["serve by the image's CMD", { name: 'c', image: OURS, args: ['serve'] }, null],
    ['serve --osm-edge-compat', { name: 'c', image: OURS, args: ['serve', '--osm-edge-compat'] }, null],
    ['serve --probes FILE', { name: 'c', image: OURS, args: ['serve', '--probes', '/t.json'] }, undefined],
    ['serve --probes=FILE', { name: 'c', image: OURS, args: ['serve', '--probes=/t.json'] }, undefined],
    [
      'the table in its env',
      { name: 'c', image: OURS, env: [{ name: 'OSM_HEALTHCHECK_PROBES', value: '{}' }] },
      undefined,
    ],
    [
      'envFrom: maybe a table',
      { name: 'c', image: OURS, envFrom: [{ configMapRef: { name: 'x' } }] },
      undefined,
    ],
    ['init, not serve', { name: 'c', image: OURS, args: ['init'] }, undefined],
    ['another command', { name: 'c', image: OURS, command: ['sh'] }, undefined],
    ['--allowed-ports V', { name: 'c', image: OURS, args: ['serve', '--allowed-ports', '8080'] }, '8080'],
    [
      '--allowed-ports=V',
      { name: 'c', image: OURS, args: ['serve', '--allowed-ports=80,90-99'] },
      '80,90-99',
    ],
    [
      'the variable',
      { name: 'c', image: OURS, env: [{ name: 'OSM_HEALTHCHECK_ALLOWED_PORTS', value: '8080' }] },
      '8080',
    ],
    [
      'the flag over the variable',
      {
        name: 'c',
        image: OURS,
        args: ['serve', '--allowed-ports', '9000'],
        env: [{ name: 'OSM_HEALTHCHECK_ALLOWED_PORTS', value: '8080' }],
      },
      '9000',
    ],
    [
      'the variable from a ConfigMap',
      {
        name: 'c',
        image: OURS,
        env: [
          { name: 'OSM_HEALTHCHECK_ALLOWED_PORTS', valueFrom: { configMapKeyRef: { name: 'x', key: 'y' } } },
        ],
      },
      'OSM_HEALTHCHECK_ALLOWED_PORTS from configMapKeyRef',
    ],
    [
      'compat with allowed ports',
      healthcheck(OURS, { env: [{ name: 'OSM_HEALTHCHECK_ALLOWED_PORTS', value: '14001' }] }),
      '14001',
    ],
  ];
  it.each(cases)('%s', (_, container, allowed) => {
    expect(tablelessCompanions(pod(container), [OURS])).toEqual(
      allowed === undefined ? [] : [{ container: String(container.name), allowedPorts: allowed }],
    );
  });

  it('a native sidecar among initContainers counts; a pod with no spec has none', () => {
    const p = {
      metadata: {},
      spec: { initContainers: [{ name: 'side', image: DEFAULT_IMAGE, restartPolicy: 'Always' }] },
    };
    expect(tablelessCompanions(p, [DEFAULT_IMAGE])).toEqual([{ container: 'side', allowedPorts: null }]);
    expect(tablelessCompanions({}, [DEFAULT_IMAGE])).toEqual([]);
  });

  it('the repository is the image without its tag or digest; a registry port is not a tag', () => {
    expect(imageRepository('reg:5000/osm-healthcheck')).toBe('reg:5000/osm-healthcheck');
    expect(imageRepository('reg:5000/osm-healthcheck:1.0@sha256:ab')).toBe('reg:5000/osm-healthcheck');
    expect(imageRepository('osm-healthcheck:0.1.0')).toBe('osm-healthcheck');
  });

  it("what it reaches, in serve's own words", () => {
    expect(reachOf(null)).toBe('any port, any path');
    expect(reachOf('8080')).toBe('ports 8080 (--allowed-ports), any path');
  });
});

describe('groupTableless', () => {
  it('by workload, container and allowed ports, sorted, pods sorted', () => {
    const groups = new Map<string, TablelessGroup>();
    const web = { namespace: 'shop', kind: 'Deployment', name: 'web' };
    groupTableless(groups, web, 'web-2', [{ container: 'h', allowedPorts: null }]);
    groupTableless(groups, web, 'web-1', [{ container: 'h', allowedPorts: null }]);
    groupTableless(groups, web, 'web-3', [{ container: 'h', allowedPorts: '80' }]);
    groupTableless(groups, { namespace: 'a', kind: 'Pod', name: 'x' }, 'x', [
      { container: 'h', allowedPorts: null },
    ]);
    expect(sortedTableless(groups).map((g) => [g.namespace, g.name, g.allowedPorts, g.pods])).toEqual([
      ['a', 'x', null, ['x']],
      ['shop', 'web', null, ['web-1', 'web-2']],
      ['shop', 'web', '80', ['web-3']],
    ]);
  });
});
