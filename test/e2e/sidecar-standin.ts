// The sidecar of osm-edge (Pipy) or OSM (Envoy) as kubelet's probes meet it, for the pod model of
// osm-edge-pod.ts: its listeners on 15901-15903 for the probes their injector pointed there, and its inbound and
// outbound listeners, which demand mTLS. What it does with a probe is a pure function of the pod, written from
// flomesh-io/osm-edge@v1.3.9 pkg/sidecar/providers/pipy/repo/codebase/{main.js,probes.js} and
// openservicemesh/osm@v1.2.4 pkg/envoy/bootstrap/envoy_config_health_probes.go.

import { DEFAULT_PORTS, PROBE_KINDS, type ProbeKind } from '../../src/scheme.js';
import { PROXY_PORT } from '../init/lab.js';
import type { ContainerSpec } from './pod-spec.js';
import type { Processes, Running } from './processes.js';

/** osm-edge's outbound listener (constants.SidecarOutboundListenerPort). */
const OUTBOUND_PORT = 15001;

/**
 * One of the sidecar's probe listeners: `http` forwards the request to `target` with its path replaced by `path`
 * (Pipy: demuxHTTP, handleMessageStart, muxHTTP; Envoy: a route with a prefix rewrite); `tcp` pipes the
 * connection's bytes to `target` (Pipy: connect; Envoy: tcp_proxy).
 */
export interface SidecarProbe {
  kind: ProbeKind;
  port: number;
  mode: 'http' | 'tcp';
  target: { host: string; port: number };
  path: string;
}

/**
 * Pipy's probe listeners for a pod. Its configuration lists every container's probes of each kind in container
 * order (repo/inform.go, jobs.go `probes`), and main.js listens on a kind's port only when the first of them
 * points there (`LivenessProbes?.[0]?.httpGet?.port === 15901`). probes.js then reads that probe's headers, not
 * the request's: Original-Http-Port sets the target 127.0.0.1:port, Original-Http-Path the path (default `/`);
 * Original-Tcp-Port sends the raw connection to 127.0.0.1:15904, osm-edge's healthcheck container. Without a
 * target header an HTTP probe goes to the first HTTP inbound port of the mesh's traffic config, which a probe
 * rewritten by osm-edge's injector always has: such probes are not modelled (an error here).
 */
export function pipyProbes(containers: readonly ContainerSpec[]): SidecarProbe[] {
  const probes: SidecarProbe[] = [];
  for (const kind of PROBE_KINDS) {
    const first = containers.flatMap((c) => c.probes.filter((p) => p.kind === kind))[0];
    const action = first?.action;
    if (action?.type !== 'httpGet' || action.port !== DEFAULT_PORTS[kind]) continue;
    let mode: SidecarProbe['mode'] = action.scheme === 'HTTP' ? 'http' : 'tcp';
    let target: SidecarProbe['target'] | undefined;
    let path = '/';
    for (const header of action.headers) {
      if (header.name === 'Original-Http-Port') target = { host: '127.0.0.1', port: Number(header.value) };
      if (header.name === 'Original-Tcp-Port') {
        target = { host: '127.0.0.1', port: DEFAULT_PORTS.healthcheck };
        mode = 'tcp';
      }
      if (header.name === 'Original-Http-Path') path = header.value === '' ? '/' : header.value;
    }
    if (target === undefined)
      throw new Error(`${kind}: a probe on ${action.port} without Original-* headers`);
    probes.push({ kind, port: action.port, mode, target, path });
  }
  return probes;
}

/**
 * OSM's Envoy probe listeners: the injector keeps each kind's original probe (pkg/injector/health_probes.go,
 * RewriteHealthProbes: the last container's wins) in Envoy's bootstrap, and getProbeResources listens on the
 * kind's port for every one that was not a TCP probe: an HTTP one as a route from /osm-<kind>-probe to the
 * original path on 127.0.0.1:port, an HTTPS one as a TCP proxy to 127.0.0.1:port (kubelet speaks TLS to the app).
 * `original`: the containers before OSM's injector.
 */
export function osmEnvoyProbes(original: readonly ContainerSpec[]): SidecarProbe[] {
  const probes: SidecarProbe[] = [];
  for (const kind of PROBE_KINDS) {
    const last = original.flatMap((c) => c.probes.filter((p) => p.kind === kind)).at(-1);
    const action = last?.action;
    if (action === undefined || action.type !== 'httpGet') continue;
    const target = { host: '127.0.0.1', port: action.port };
    probes.push(
      action.scheme === 'HTTP'
        ? { kind, port: DEFAULT_PORTS[kind], mode: 'http', target, path: action.path }
        : { kind, port: DEFAULT_PORTS[kind], mode: 'tcp', target, path: '/' },
    );
  }
  return probes;
}

// argv[1]: the probe listeners. Inbound (15003) and outbound (15001) answer PROXY and close: what a client
// without the mesh's mTLS gets. A probe's answer is the app's, status and body, as Pipy relays it.
const PIPY = `
const http = require('node:http');
const net = require('node:net');
const probes = JSON.parse(process.argv[1]);
const servers = [];
const proxy = net.createServer((s) => { s.on('error', () => {}); s.end('PROXY\\n'); });
servers.push([proxy, ${PROXY_PORT}], [net.createServer((s) => { s.on('error', () => {}); s.end('PROXY\\n'); }), ${OUTBOUND_PORT}]);
for (const p of probes) {
  const server = p.mode === 'http'
    ? http.createServer((req, res) => {
        const out = http.request({ host: p.target.host, port: p.target.port, method: req.method, path: p.path,
          headers: req.headers, agent: false }, (answer) => {
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        });
        out.on('error', () => res.socket && res.socket.destroy());
        req.pipe(out);
      })
    : net.createServer((client) => {
        const upstream = net.connect(p.target.port, p.target.host);
        for (const s of [client, upstream]) s.on('error', () => { client.destroy(); upstream.destroy(); });
        client.pipe(upstream);
        upstream.pipe(client);
      });
  servers.push([server, p.port]);
}
let pending = servers.length;
for (const [server, port] of servers) {
  server.on('error', (err) => { process.stderr.write('sidecar: ' + err.message + '\\n'); process.exit(1); });
  server.listen({ port, host: '::' }, () => { if (--pending === 0) process.stdout.write('ready\\n'); });
}`;

/** Starts the stand-in in the pod as `prefix` (the sidecar's uid through setpriv) and waits until it listens. */
export async function startSidecarStandin(
  procs: Processes,
  ns: string,
  probes: readonly SidecarProbe[],
  prefix: readonly string[],
  timeoutMs: number,
): Promise<Running> {
  const sidecar = procs.start('sidecar stand-in', ns, [
    ...prefix,
    process.execPath,
    '-e',
    PIPY,
    JSON.stringify(probes),
  ]);
  await sidecar.waitFor((line) => line === 'ready', timeoutMs);
  return sidecar;
}
