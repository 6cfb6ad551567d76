// rewritePodSpec, the pure rewrite the CLI and the webhook share: one table of probe shapes, then the pod-level
// rules (companion, init container, placement, idempotence, opt-out) and the errors.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HealthcheckError } from '../../src/errors.js';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME, WAIT_COMMAND } from '../../src/rewrite/companion.js';
import { DEFAULT_CONTAINER_ANNOTATION } from '../../src/rewrite/default-container.js';
import { ManifestError } from '../../src/rewrite/manifest-error.js';
import type { PlacementMode } from '../../src/rewrite/placement.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import { RECORD_ANNOTATION, RECORD_VERSION, readRecord, tableDigest } from '../../src/rewrite/record.js';
import type { Container, PodSpec, Probe, RewriteOptions } from '../../src/rewrite/types.js';
import { PROBES_ENV, SHUTDOWN_GRACE_ENV } from '../../src/scheme.js';
import { parseProbeTable } from '../../src/table/parse.js';
import type { ProbeEntryDocument } from '../../src/table/types.js';
import { osmEdgeInject } from './osm-edge-injector.js';

const OPTIONS: RewriteOptions = { image: DEFAULT_IMAGE, placement: 'first' };

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function pod(...containers: Container[]): PodSpec {
  return deepFreeze({ containers });
}

function rewrite(spec: PodSpec, annotations?: Record<string, string>, options = OPTIONS) {
  return rewritePodSpec(spec, annotations, options, 'Pod/test');
}

/** The annotations other than the record, which its own tests below judge. */
function withoutRecord(annotations: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([key]) => key !== RECORD_ANNOTATION));
}

function container(spec: PodSpec, name: string): Container | undefined {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])].find((c) => c.name === name);
}

const ports = [
  { name: 'http', containerPort: 8080 },
  { name: 'grpc', containerPort: 9090 },
];

describe('probes that are rewritten', () => {
  it.each<{
    name: string;
    field: 'livenessProbe' | 'readinessProbe' | 'startupProbe';
    probe: Probe;
    rewritten: Probe;
    entry: ProbeEntryDocument;
  }>([
    {
      name: 'httpGet HTTP, every timing field kept',
      field: 'livenessProbe',
      probe: {
        httpGet: { path: '/live', port: 8080 },
        initialDelaySeconds: 3,
        periodSeconds: 7,
        timeoutSeconds: 2,
        successThreshold: 1,
        failureThreshold: 4,
        terminationGracePeriodSeconds: 9,
      },
      rewritten: {
        httpGet: { path: '/osm-liveness-probe/app', port: 15901, scheme: 'HTTP' },
        initialDelaySeconds: 3,
        periodSeconds: 7,
        timeoutSeconds: 2,
        successThreshold: 1,
        failureThreshold: 4,
        terminationGracePeriodSeconds: 9,
      },
      entry: { httpGet: { path: '/live', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 2 },
    },
    {
      name: 'httpGet HTTPS: kubelet speaks plain HTTP to the companion, which speaks HTTPS to the app',
      field: 'readinessProbe',
      probe: { httpGet: { scheme: 'HTTPS', path: '/ready', port: 8443 } },
      rewritten: { httpGet: { path: '/osm-readiness-probe/app', port: 15902, scheme: 'HTTP' } },
      entry: { httpGet: { path: '/ready', port: 8443, scheme: 'HTTPS' }, timeoutSeconds: 1 },
    },
    {
      name: 'httpGet headers (Host among them) and the query move into the table',
      field: 'startupProbe',
      probe: {
        httpGet: {
          path: '/s?full=1',
          port: 8080,
          httpHeaders: [
            { name: 'Host', value: 'a.example' },
            { name: 'X-A', value: '' },
          ],
        },
      },
      rewritten: { httpGet: { path: '/osm-startup-probe/app', port: 15903, scheme: 'HTTP' } },
      entry: {
        httpGet: {
          path: '/s?full=1',
          port: 8080,
          scheme: 'HTTP',
          httpHeaders: [
            { name: 'Host', value: 'a.example' },
            { name: 'X-A', value: '' },
          ],
        },
        timeoutSeconds: 1,
      },
    },
    {
      name: 'httpGet without a path: "/" as kubelet would use',
      field: 'livenessProbe',
      probe: { httpGet: { port: 8080 } },
      rewritten: { httpGet: { path: '/osm-liveness-probe/app', port: 15901, scheme: 'HTTP' } },
      entry: { httpGet: { path: '/', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 1 },
    },
    {
      name: 'httpGet named port',
      field: 'livenessProbe',
      probe: { httpGet: { path: '/live', port: 'http' } },
      rewritten: { httpGet: { path: '/osm-liveness-probe/app', port: 15901, scheme: 'HTTP' } },
      entry: { httpGet: { path: '/live', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 1 },
    },
    {
      name: 'a number written as a string: kubelet tries it as a number when no port has that name',
      field: 'livenessProbe',
      probe: { httpGet: { path: '/live', port: '8081' } },
      rewritten: { httpGet: { path: '/osm-liveness-probe/app', port: 15901, scheme: 'HTTP' } },
      entry: { httpGet: { path: '/live', port: 8081, scheme: 'HTTP' }, timeoutSeconds: 1 },
    },
    {
      name: 'tcpSocket: the healthcheck port with the app port in a header, handler kept in its place',
      field: 'readinessProbe',
      probe: { periodSeconds: 4, tcpSocket: { port: 'grpc' }, timeoutSeconds: 3 },
      rewritten: {
        periodSeconds: 4,
        httpGet: {
          path: '/osm-healthcheck',
          port: 15904,
          scheme: 'HTTP',
          httpHeaders: [{ name: 'Original-Tcp-Port', value: '9090' }],
        },
        timeoutSeconds: 3,
      },
      entry: { tcpSocket: { port: 9090 }, timeoutSeconds: 3 },
    },
    {
      name: 'grpc, default service',
      field: 'livenessProbe',
      probe: { grpc: { port: 9090 } },
      rewritten: { httpGet: { path: '/osm-liveness-probe/app', port: 15901, scheme: 'HTTP' } },
      entry: { grpc: { port: 9090 }, timeoutSeconds: 1 },
    },
    {
      name: 'grpc with a service',
      field: 'startupProbe',
      probe: { grpc: { port: 9090, service: 'orders' }, failureThreshold: 30 },
      rewritten: {
        httpGet: { path: '/osm-startup-probe/app', port: 15903, scheme: 'HTTP' },
        failureThreshold: 30,
      },
      entry: { grpc: { port: 9090, service: 'orders' }, timeoutSeconds: 1 },
    },
  ])('$name', ({ field, probe, rewritten, entry }) => {
    const result = rewrite(pod({ name: 'app', ports, [field]: probe }));
    expect(result.changed).toBe(true);
    expect(result.warnings).toEqual([]);
    expect(container(result.spec, 'app')?.[field]).toEqual(rewritten);
    const kind = field.replace('Probe', '') as 'liveness';
    expect(result.table).toEqual({ [kind]: { app: entry } });
    // What serve runs is what inject wrote.
    expect(parseProbeTable(result.table)[kind].get('app')).toBeDefined();
    const env = container(result.spec, COMPANION_NAME)?.env?.find((e) => e.name === PROBES_ENV);
    expect(JSON.parse(env?.value ?? '')).toEqual(result.table);
  });
});

describe('probes that are left as they are', () => {
  it.each<{ name: string; probe: Probe; warning?: string }>([
    { name: 'exec', probe: { exec: { command: ['true'] } } },
    { name: 'no handler at all', probe: { periodSeconds: 5 } },
    {
      name: 'httpGet with a host',
      probe: { httpGet: { host: '10.0.0.1', port: 80 } },
      warning:
        'Pod/test: container "app" livenessProbe: httpGet.host is "10.0.0.1", so kubelet dials that host rather than the pod; the probe is left unchanged',
    },
    {
      name: 'tcpSocket with a host',
      probe: { tcpSocket: { host: 'db.internal', port: 5432 } },
      warning:
        'Pod/test: container "app" livenessProbe: tcpSocket.host is "db.internal", so kubelet dials that host rather than the pod; the probe is left unchanged',
    },
    {
      name: 'unresolvable named port',
      probe: { httpGet: { path: '/', port: 'metrics' } },
      warning: `Pod/test: container "app" livenessProbe: port "metrics" is none of the container's port names; the probe is left unchanged`,
    },
  ])('$name', ({ probe, warning }) => {
    const spec = pod({ name: 'app', ports, livenessProbe: probe });
    const result = rewrite(spec);
    expect(result).toEqual({
      spec,
      annotations: {},
      table: {},
      warnings: warning === undefined ? [] : [warning],
      changed: false,
    });
    expect(result.spec).not.toBe(spec);
  });
});

describe('our ports are ours: a probe on 15901-15904 in a pod without our companion is an error at its port', () => {
  it.each<{ name: string; probe: Probe; at: string }>([
    {
      name: 'httpGet',
      probe: { httpGet: { path: '/osm-liveness-probe/app', port: 15901 } },
      at: 'livenessProbe.httpGet.port',
    },
    {
      name: '/osm-healthcheck without headers',
      probe: { httpGet: { path: '/osm-healthcheck', port: 15904 } },
      at: 'livenessProbe.httpGet.port',
    },
    { name: 'tcpSocket', probe: { tcpSocket: { port: 15902 } }, at: 'livenessProbe.tcpSocket.port' },
    { name: 'grpc', probe: { grpc: { port: 15903 } }, at: 'livenessProbe.grpc.port' },
  ])('$name', ({ probe, at }) => {
    expect(() => rewrite(pod({ name: 'app', livenessProbe: probe }))).toThrow(
      expect.objectContaining({ path: ['containers', 0, ...at.split('.')] }),
    );
    expect(() => rewrite(pod({ name: 'app', livenessProbe: probe }))).toThrow(
      /is one of the companion's ports \(15901-15904\) and this pod has no companion of ours/,
    );
  });

  it("a container of the user's that listens on 15901-15904", () => {
    const spec = pod({
      name: 'app',
      ports: [{ containerPort: 15902 }],
      livenessProbe: { tcpSocket: { port: 8080 } },
    });
    expect(() => rewrite(spec)).toThrow(/15902 is one of the companion's ports \(15901-15904\)/);
  });

  it.each([COMPANION_NAME, INIT_NAME])("a container of the user's named %s", (name) => {
    const spec = pod(
      { name: 'app', livenessProbe: { tcpSocket: { port: 8080 } } },
      { name, image: 'mine:1' },
    );
    expect(() => rewrite(spec)).toThrow(
      expect.objectContaining({
        path: ['containers', 1, 'name'],
        message: expect.stringContaining("is not inject's"),
      }),
    );
  });
});

/** A probe as osm-edge's injector leaves it: /osm-healthcheck on a companion port, the target in headers. */
function osmEdge(port: number, headers: [string, string][], timeoutSeconds?: number): Probe {
  const httpGet = {
    path: '/osm-healthcheck',
    port,
    scheme: 'HTTP',
    httpHeaders: headers.map(([name, value]) => ({ name, value })),
  };
  return timeoutSeconds === undefined ? { httpGet } : { httpGet, timeoutSeconds };
}

describe("probes osm-edge's injector rewrote: the pod stays osm-edge's, with a note that says what answers them", () => {
  const SIDECAR = {
    name: 'sidecar',
    image: 'flomesh/pipy',
    ports: [{ containerPort: 15901 }, { containerPort: 15902 }, { containerPort: 15903 }],
  };
  const HEALTHCHECK = {
    name: 'osm-healthcheck',
    image: 'osm-healthcheck',
    command: ['/osm-healthcheck'],
    ports: [{ containerPort: 15904 }],
  };
  const http = osmEdge(15901, [
    ['Original-Http-Port', '8080'],
    ['Original-Http-Path', '/live'],
  ]);
  const tcp = osmEdge(15904, [['Original-Tcp-Port', '5432']], 4);
  const nothingAnswers = (what: string, missing: string) =>
    `Pod/test: left untouched: "app" ${what} is in osm-edge's form but nothing answers it (no ${missing}): it will fail. Let osm-edge inject the pod, or restore the app's probe (docs/meshes.md)`;
  const ITS_OWN =
    "Pod/test: left untouched: osm-edge (or OSM) injected this pod; its sidecar answers the probes on the companion's ports 15901-15904. To use this project there, run its image as osm-edge's healthcheck container (docs/meshes.md)";

  it.each<{ name: string; app: Partial<Container>; beside: Container[]; warning: string }>([
    {
      name: 'Original-Http-Port + Original-Http-Path on 15901, no sidecar',
      app: { livenessProbe: http },
      beside: [],
      warning: nothingAnswers('liveness', 'osm-edge sidecar on 15901-15903'),
    },
    {
      name: 'Original-Tcp-Port on 15904, no healthcheck container',
      app: { livenessProbe: tcp },
      beside: [],
      warning: nothingAnswers('liveness', 'osm-edge healthcheck container on 15904'),
    },
    {
      name: 'a malformed Original-Tcp-Port on 15904, no healthcheck container',
      app: { readinessProbe: osmEdge(15904, [['Original-Tcp-Port', 'http']]) },
      beside: [],
      warning: nothingAnswers('readiness', 'osm-edge healthcheck container on 15904'),
    },
    {
      name: 'Original-Tcp-Port on 15904 beside the sidecar alone',
      app: { livenessProbe: tcp },
      beside: [SIDECAR],
      warning: nothingAnswers('liveness', 'osm-edge healthcheck container on 15904'),
    },
    {
      name: 'both forms, neither listener',
      app: { livenessProbe: http, readinessProbe: tcp },
      beside: [],
      warning:
        'Pod/test: left untouched: "app" liveness, "app" readiness are in osm-edge\'s form but nothing answers them (no osm-edge sidecar on 15901-15903 and no osm-edge healthcheck container on 15904): they will fail. Let osm-edge inject the pod, or restore the app\'s probes (docs/meshes.md)',
    },
    {
      name: 'both forms, with its sidecar and its healthcheck container',
      app: { livenessProbe: http, readinessProbe: tcp },
      beside: [SIDECAR, HEALTHCHECK],
      warning: ITS_OWN,
    },
    {
      name: 'Original-Http-Port on 15901 with its sidecar',
      app: { livenessProbe: http },
      beside: [SIDECAR],
      warning: ITS_OWN,
    },
  ])('$name', ({ app, beside, warning }) => {
    const spec = pod({ name: 'app', ...app }, ...beside);
    const result = rewrite(spec);
    expect(result.spec).toEqual(spec);
    expect(result.changed).toBe(false);
    expect(result.warnings).toEqual([warning]);
  });
});

describe("osm-edge's injector and inject, in either order", () => {
  const spec = pod(
    {
      name: 'web',
      ports: [{ name: 'http', containerPort: 8080 }],
      livenessProbe: { httpGet: { path: '/live', port: 'http' }, timeoutSeconds: 2 },
      readinessProbe: { tcpSocket: { port: 8080 } },
      startupProbe: { grpc: { port: 9090 }, failureThreshold: 30 },
    },
    { name: 'api', readinessProbe: { httpGet: { path: '/ready', port: 8443, scheme: 'HTTPS' } } },
  );

  it('inject after osm-edge: the pod stays as osm-edge made it, with a note', () => {
    const edge = deepFreeze(osmEdgeInject(spec));
    const result = rewrite(edge);
    expect(result.spec).toEqual(edge);
    expect(result.changed).toBe(false);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/left untouched: osm-edge \(or OSM\) injected this pod/);
  });

  it('osm-edge after inject: on reinvocation the pod becomes what osm-edge alone makes of it, then stays', () => {
    const once = rewrite(spec);
    const wrapped = deepFreeze(osmEdgeInject(once.spec));
    // Both would listen on 15901-15903: the companion and osm-edge's sidecar.
    expect(container(wrapped, 'sidecar')?.ports?.map((p) => p.containerPort)).toContain(15901);
    const again = rewrite(wrapped, once.annotations);
    expect(again.changed).toBe(true);
    expect(again.warnings[0]).toMatch(/osm-edge \(or OSM\) injected this pod after us/);
    expect(again.spec).toEqual(osmEdgeInject(spec, DEFAULT_IMAGE));
    const third = rewrite(deepFreeze(again.spec), once.annotations);
    expect(third.changed).toBe(false);
  });
});

describe('the pod around the probes', () => {
  const app = { name: 'app', image: 'app:1', livenessProbe: { httpGet: { path: '/live', port: 8080 } } };

  it('never mutates its input (deep-frozen) and returns a new spec', () => {
    const spec = pod(app);
    const before = structuredClone(spec);
    const result = rewrite(spec);
    expect(spec).toEqual(before);
    expect(result.spec.containers?.[0]).not.toBe(spec.containers?.[0]);
  });

  it('adds the init container first and the companion first among the containers, with its postStart hook, keeping the spec key order', () => {
    const spec = deepFreeze({ restartPolicy: 'Always', containers: [app], volumes: [] });
    const result = rewrite(spec);
    expect(Object.keys(result.spec)).toEqual(['restartPolicy', 'initContainers', 'containers', 'volumes']);
    expect(result.spec.initContainers?.map((c) => c.name)).toEqual([INIT_NAME]);
    expect(result.spec.containers?.map((c) => c.name)).toEqual([COMPANION_NAME, 'app']);
    const companion = container(result.spec, COMPANION_NAME);
    expect(companion).toMatchObject({
      image: DEFAULT_IMAGE,
      args: ['serve'],
      securityContext: {
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      },
      env: [
        { name: PROBES_ENV },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: SHUTDOWN_GRACE_ENV, value: '30' },
      ],
      // Kubelet starts the next container once this returned: the companion listens before the app starts.
      lifecycle: { postStart: { exec: { command: ['node', '/app/dist/cli.mjs', 'wait'] } } },
      startupProbe: { httpGet: { path: '/healthz', port: 15904 } },
      livenessProbe: { httpGet: { path: '/healthz', port: 15904 } },
    });
    expect(companion?.restartPolicy).toBeUndefined();
    expect(companion?.ports?.map((p) => [p.name, p.containerPort])).toEqual([
      ['osm-hc-live', 15901],
      ['osm-hc-ready', 15902],
      ['osm-hc-startup', 15903],
      ['osm-hc-health', 15904],
    ]);
    expect(companion?.ports?.every((p) => (p.name ?? '').length <= 15)).toBe(true);
    expect(container(result.spec, INIT_NAME)).toMatchObject({
      args: ['init'],
      securityContext: { runAsUser: 0, capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] } },
    });
  });

  it('with nativeSidecar: the companion is an init container with restartPolicy Always, after ours', () => {
    const spec = deepFreeze({ initContainers: [{ name: 'migrate', image: 'm' }], containers: [app] });
    const result = rewrite(spec, undefined, { image: 'reg.example/hc:2', placement: 'native-sidecar' });
    expect(result.spec.initContainers?.map((c) => c.name)).toEqual([INIT_NAME, COMPANION_NAME, 'migrate']);
    expect(result.spec.containers?.map((c) => c.name)).toEqual(['app']);
    expect(container(result.spec, COMPANION_NAME)).toMatchObject({
      image: 'reg.example/hc:2',
      restartPolicy: 'Always',
    });
    // Its startupProbe holds back the next container; a postStart hook would only add a process.
    expect(container(result.spec, COMPANION_NAME)?.lifecycle).toBeUndefined();
    expect(container(result.spec, INIT_NAME)?.image).toBe('reg.example/hc:2');
  });

  it.each([
    { name: 'unset: Kubernetes default', grace: undefined, want: '30' },
    { name: 'null: unset', grace: null, want: '30' },
    { name: 'zero', grace: 0, want: '0' },
    { name: 'two minutes', grace: 120, want: '120' },
  ])(
    "the companion's shutdown grace is the pod's terminationGracePeriodSeconds: $name",
    ({ grace, want }) => {
      const spec = deepFreeze({
        containers: [app],
        ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }),
      });
      for (const placement of ['first', 'native-sidecar'] as const) {
        const env = container(
          rewrite(spec as PodSpec, undefined, { ...OPTIONS, placement }).spec,
          COMPANION_NAME,
        )?.env;
        expect(env?.find((e) => e.name === SHUTDOWN_GRACE_ENV)?.value).toBe(want);
      }
    },
  );

  it("the postStart hook runs wait with the CLI the image ships (its entrypoint, without tini and serve's supervisor, which execs any other subcommand)", () => {
    const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    const supervisor = entrypoint.indexOf('--') + 1;
    expect(entrypoint[supervisor]).toBe('/app/supervise.sh');
    expect(entrypoint.slice(supervisor + 1)).toEqual(WAIT_COMMAND.slice(0, -1));
    expect(WAIT_COMMAND.at(-1)).toBe('wait');
  });

  it("re-injecting an earlier release's output (companion last) moves the companion first", () => {
    const once = rewrite(pod(app)).spec;
    const [companion, ...rest] = once.containers ?? [];
    const earlier = deepFreeze({ ...once, containers: [...rest, companion] as Container[] });
    const again = rewrite(earlier);
    expect(again.changed).toBe(true);
    expect(again.spec).toEqual(once);
    expect(withoutRecord(again.annotations)).toEqual({ [DEFAULT_CONTAINER_ANNOTATION]: 'app' });
  });

  it('probes of a native sidecar are rewritten and make the companion native; plain init containers are not probed', () => {
    const spec = deepFreeze({
      initContainers: [
        { name: 'setup', image: 's', livenessProbe: { httpGet: { port: 1 } } },
        { name: 'proxy', image: 'p', restartPolicy: 'Always', startupProbe: { tcpSocket: { port: 15000 } } },
      ],
      containers: [{ name: 'app', image: 'a' }],
    });
    const result = rewrite(spec);
    expect(result.table).toEqual({ startup: { proxy: { tcpSocket: { port: 15000 }, timeoutSeconds: 1 } } });
    expect(result.spec.initContainers?.map((c) => c.name)).toEqual([
      INIT_NAME,
      COMPANION_NAME,
      'setup',
      'proxy',
    ]);
    expect(result.warnings).toEqual([
      'Pod/test: native sidecar "proxy" has probes answered by the companion, so the companion runs as a native sidecar too',
    ]);
  });

  it('the opt-out annotation leaves the pod alone', () => {
    const spec = pod(app);
    const result = rewrite(spec, { 'osm-healthcheck/rewrite-probes': 'false' });
    expect(result).toEqual({ spec, annotations: {}, table: {}, warnings: [], changed: false });
    expect(rewrite(spec, { 'osm-healthcheck/rewrite-probes': 'true' }).changed).toBe(true);
  });

  it('two containers with the same probe kind get one path each, in pod order', () => {
    const result = rewrite(pod({ ...app, name: 'b' }, { ...app, name: 'a' }));
    expect(Object.keys(result.table.liveness ?? {})).toEqual(['b', 'a']);
    expect(container(result.spec, 'a')?.livenessProbe?.httpGet?.path).toBe('/osm-liveness-probe/a');
    expect(container(result.spec, 'b')?.livenessProbe?.httpGet?.path).toBe('/osm-liveness-probe/b');
  });

  it('is idempotent: rewriting the result again changes nothing', () => {
    const once = rewrite(pod(app, { name: 'db', image: 'd', readinessProbe: { tcpSocket: { port: 5432 } } }));
    const twice = rewrite(deepFreeze(once.spec), once.annotations);
    expect(twice.changed).toBe(false);
    expect(twice.annotations).toEqual({});
    expect(twice.spec).toEqual(once.spec);
    expect(twice.table).toEqual(once.table);
  });

  it('a second inject keeps earlier entries, adds new probes, follows timeout changes and rebuilds the companion', () => {
    const once = rewrite(pod(app)).spec;
    const edited = structuredClone(once);
    const appContainer = container(edited, 'app') as Container;
    appContainer.readinessProbe = { grpc: { port: 9090 } };
    (appContainer.livenessProbe as Probe).timeoutSeconds = 4;
    const result = rewrite(deepFreeze(edited), undefined, { image: 'hc:9', placement: 'native-sidecar' });
    expect(result.table).toEqual({
      liveness: { app: { httpGet: { path: '/live', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 4 } },
      readiness: { app: { grpc: { port: 9090 }, timeoutSeconds: 1 } },
    });
    expect(result.spec.containers?.map((c) => c.name)).toEqual(['app']);
    expect(result.spec.initContainers?.map((c) => [c.name, c.image])).toEqual([
      [INIT_NAME, 'hc:9'],
      [COMPANION_NAME, 'hc:9'],
    ]);
  });

  it('a workload with no probes is unchanged and gets no companion', () => {
    const spec = pod({ name: 'app', image: 'a' });
    expect(rewrite(spec)).toEqual({ spec, annotations: {}, table: {}, warnings: [], changed: false });
  });
});

describe("kubectl's default container, for the pod (template)'s metadata", () => {
  const probed = { name: 'web', image: 'w', readinessProbe: { tcpSocket: { port: 8080 } } };
  const KEY = DEFAULT_CONTAINER_ANNOTATION;

  it.each<{
    name: string;
    spec: PodSpec;
    annotations?: Record<string, string>;
    placement?: PlacementMode;
    added: Record<string, string>;
  }>([
    { name: 'no annotations: the first app container', spec: pod(probed), added: { [KEY]: 'web' } },
    {
      name: 'other annotations: added beside them',
      spec: pod({ name: 'logs', image: 'l' }, probed),
      annotations: { 'prometheus.io/scrape': 'true' },
      added: { [KEY]: 'logs' },
    },
    {
      name: "the pod's own value: kept",
      spec: pod(probed, { name: 'shell', image: 's' }),
      annotations: { [KEY]: 'shell' },
      added: {},
    },
    {
      name: "the pod's own value naming the companion: kept",
      spec: pod(probed),
      annotations: { [KEY]: COMPANION_NAME },
      added: {},
    },
    {
      name: 'native sidecar asked for: no annotation (the app is the first container)',
      spec: pod(probed),
      placement: 'native-sidecar',
      added: {},
    },
    {
      name: 'native sidecar forced by a probed sidecar: no annotation',
      spec: deepFreeze({
        initContainers: [
          { name: 'proxy', image: 'p', restartPolicy: 'Always', startupProbe: { tcpSocket: { port: 1 } } },
        ],
        containers: [{ name: 'app', image: 'a' }],
      }),
      added: {},
    },
    {
      name: 'opted out: untouched',
      spec: pod(probed),
      annotations: { 'osm-healthcheck/rewrite-probes': 'false' },
      added: {},
    },
    {
      name: 'nothing to rewrite: no companion, no annotation',
      spec: pod({ name: 'web', image: 'w' }),
      added: {},
    },
  ])('$name', ({ spec, annotations, placement = 'first', added }) => {
    const result = rewrite(spec, annotations, { ...OPTIONS, placement });
    expect(withoutRecord(result.annotations)).toEqual(added);
    // With the annotations written, rewriting again adds nothing and changes nothing.
    const again = rewrite(
      deepFreeze(result.spec),
      { ...annotations, ...result.annotations },
      { ...OPTIONS, placement },
    );
    expect(again.annotations).toEqual({});
    expect(again.changed).toBe(false);
  });

  it('a pod injected before this annotation existed (companion first, spec as today): only the annotation is new', () => {
    const once = rewrite(pod(probed));
    const again = rewrite(deepFreeze(once.spec));
    expect(again.changed).toBe(true);
    expect(again.spec).toEqual(once.spec);
    expect(withoutRecord(again.annotations)).toEqual({ [KEY]: 'web' });
  });
});

describe('invalid pod specs', () => {
  it.each<{ name: string; spec: unknown; path: (string | number)[]; problem: RegExp }>([
    { name: 'not an object', spec: [], path: [], problem: /pod spec must be an object, got an array/ },
    {
      name: 'no containers',
      spec: {},
      path: ['containers'],
      problem: /must be a list of containers, got nothing/,
    },
    {
      name: 'a container without a name',
      spec: { containers: [{ image: 'x' }] },
      path: ['containers', 0],
      problem: /container has no name/,
    },
    {
      name: 'duplicate names across init containers and containers',
      spec: { initContainers: [{ name: 'a' }], containers: [{ name: 'b' }, { name: 'a' }] },
      path: ['containers', 1, 'name'],
      problem: /duplicate container name "a" \(also initContainers\[0\]\)/,
    },
    {
      name: 'a name that is no DNS label',
      spec: { containers: [{ name: 'App_1' }] },
      path: ['containers', 0, 'name'],
      problem: /DNS-1123/,
    },
    {
      name: 'a port out of range',
      spec: { containers: [{ name: 'a', livenessProbe: { httpGet: { port: 0 } } }] },
      path: ['containers', 0, 'livenessProbe', 'httpGet', 'port'],
      problem: /must be an integer 1-65535, got 0/,
    },
    {
      name: 'a named gRPC port',
      spec: { containers: [{ name: 'a', livenessProbe: { grpc: { port: 'grpc' } } }] },
      path: ['containers', 0, 'livenessProbe', 'grpc', 'port'],
      problem: /must be a port number, got "grpc"/,
    },
    {
      name: 'two handlers',
      spec: { containers: [{ name: 'a', readinessProbe: { exec: {}, tcpSocket: { port: 1 } } }] },
      path: ['containers', 0, 'readinessProbe'],
      problem: /exactly one handler, got tcpSocket and exec/,
    },
    {
      name: 'a header the companion could not send',
      spec: {
        containers: [
          { name: 'a', livenessProbe: { httpGet: { port: 1, httpHeaders: [{ name: 'a b', value: '' }] } } },
        ],
      },
      path: ['containers', 0, 'livenessProbe', 'httpGet', 'httpHeaders', 0, 'name'],
      problem: /must be an HTTP header name/,
    },
    {
      name: 'a timeout below one second',
      spec: { containers: [{ name: 'a', livenessProbe: { tcpSocket: { port: 1 }, timeoutSeconds: 0 } }] },
      path: ['containers', 0, 'livenessProbe', 'timeoutSeconds'],
      problem: /must be an integer >= 1, got 0/,
    },
    {
      name: 'a named port pointing at a bad containerPort',
      spec: {
        containers: [
          {
            name: 'a',
            ports: [{ name: 'p', containerPort: 'x' }],
            livenessProbe: { tcpSocket: { port: 'p' } },
          },
        ],
      },
      path: ['containers', 0, 'ports', 0, 'containerPort'],
      problem: /must be an integer 1-65535, got "x"/,
    },
    {
      name: "an earlier companion's table that serve would refuse",
      spec: {
        containers: [
          { name: 'a' },
          { name: 'osm-healthcheck', env: [{ name: PROBES_ENV, value: '{"live":{}}' }] },
        ],
      },
      path: ['containers', 1, 'env', 0, 'value'],
      problem: /the companion's probe table is invalid: live: unknown probe kind/,
    },
    {
      name: 'a grace period that is no whole number of seconds',
      spec: {
        terminationGracePeriodSeconds: '30',
        containers: [{ name: 'a', livenessProbe: { tcpSocket: { port: 1 } } }],
      },
      path: ['terminationGracePeriodSeconds'],
      problem: /must be a whole number of seconds, 0 or more, got "30"/,
    },
  ])('$name', ({ spec, path, problem }) => {
    const call = () => rewrite(deepFreeze(spec) as PodSpec);
    expect(call).toThrow(ManifestError);
    try {
      call();
    } catch (err) {
      expect(err).toBeInstanceOf(HealthcheckError);
      expect(err).toMatchObject({ code: 'OSM_HC_MANIFEST', resource: 'Pod/test', path });
      expect((err as ManifestError).problem).toMatch(problem);
    }
  });
});

describe('the record on every pod the rewrite gives the companion', () => {
  const probed: Container = {
    name: 'web',
    image: 'w',
    livenessProbe: { httpGet: { path: '/', port: 8080 } },
  };

  it('names the version, the image, the placement, the bypass and the digest of the table the companion holds', () => {
    const result = rewrite(pod(probed), undefined, { ...OPTIONS, image: 'registry.example.com/hc:9' });
    const read = readRecord(result.annotations);
    const table = container(result.spec, COMPANION_NAME)?.env?.find((e) => e.name === PROBES_ENV)?.value;
    expect(read).toEqual({
      state: 'present',
      record: {
        version: RECORD_VERSION,
        image: 'registry.example.com/hc:9',
        placement: 'first',
        bypass: 'init-container',
        probes: tableDigest(String(table)),
      },
    });
    // One short line: it rides on every pod.
    expect(result.annotations[RECORD_ANNOTATION]?.length).toBeLessThan(200);
  });

  it.each<{
    name: string;
    options: Partial<RewriteOptions>;
    spec?: PodSpec;
    placement: string;
    bypass: string;
  }>([
    {
      name: 'a native sidecar',
      options: { placement: 'native-sidecar' },
      placement: 'native-sidecar',
      bypass: 'init-container',
    },
    {
      name: "the mesh's own exclusion",
      options: { meshExclusion: 'istio' },
      placement: 'first',
      bypass: 'mesh:istio',
    },
  ])('$name', ({ options, placement, bypass }) => {
    const result = rewrite(pod(probed), undefined, { ...OPTIONS, ...options });
    const read = readRecord(result.annotations);
    expect(read.state === 'present' && read.record).toMatchObject({ placement, bypass });
  });

  it('is written again only when something it says changed: a new image, a new table', () => {
    const once = rewrite(pod(probed));
    const annotations = { ...once.annotations };
    expect(rewrite(deepFreeze(once.spec), annotations).changed).toBe(false);
    const newImage = rewrite(deepFreeze(once.spec), annotations, {
      ...OPTIONS,
      image: 'osm-healthcheck:9.9.9',
    });
    expect(newImage.annotations[RECORD_ANNOTATION]).toContain('"image":"osm-healthcheck:9.9.9"');
    const moreProbes = pod({ ...probed, readinessProbe: { tcpSocket: { port: 8080 } } });
    const other = rewrite(moreProbes, annotations);
    expect(readRecord(other.annotations)).not.toEqual(readRecord(annotations));
  });

  it.each<{ name: string; spec: PodSpec; annotations?: Record<string, string> }>([
    { name: 'opted out', spec: pod(probed), annotations: { 'osm-healthcheck/rewrite-probes': 'false' } },
    { name: 'no probe to rewrite', spec: pod({ name: 'web', image: 'w' }) },
    {
      name: 'only exec probes',
      spec: pod({ name: 'web', image: 'w', livenessProbe: { exec: { command: ['true'] } } }),
    },
    { name: 'hostNetwork', spec: { ...pod(probed), hostNetwork: true } },
  ])('an untouched pod gets none: $name', ({ spec, annotations }) => {
    const result = rewrite(deepFreeze(spec), annotations);
    expect(result.changed).toBe(false);
    expect(result.annotations).toEqual({});
  });
});
