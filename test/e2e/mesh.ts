// The mesh in the pod, beyond the lab's inbound interception (test/init/lab.ts): osm-edge's outbound rules, and
// a stand-in for its sidecar proxy, as kubelet's probes meet it.

import { type Backend, type Lab, PROXY_PORT } from '../init/lab.js';
import type { Processes } from './processes.js';

// flomesh-io/osm-edge pkg/injector/iptables.go. The companion dials the app at the pod IP over lo, which osm-edge
// RETURNs for every uid but the proxy's; if that went wrong its probes would land on port 15001, where nothing
// listens here.
const PROXY_UID = 1500;
const OUTBOUND_PROXY_PORT = 15001;

function outboundRules(loopback: string): string[] {
  return [
    '-t nat -N PROXY_OUTBOUND',
    '-t nat -N PROXY_OUT_REDIRECT',
    `-t nat -A PROXY_OUT_REDIRECT -p tcp -j REDIRECT --to-port ${OUTBOUND_PROXY_PORT}`,
    '-t nat -A OUTPUT -p tcp -j PROXY_OUTBOUND',
    `-t nat -A PROXY_OUTBOUND -o lo ! -d ${loopback} -m owner --uid-owner ${PROXY_UID} -j PROXY_IN_REDIRECT`,
    `-t nat -A PROXY_OUTBOUND -o lo -m owner ! --uid-owner ${PROXY_UID} -j RETURN`,
    `-t nat -A PROXY_OUTBOUND -m owner --uid-owner ${PROXY_UID} -j RETURN`,
    `-t nat -A PROXY_OUTBOUND -d ${loopback} -j RETURN`,
    '-t nat -A PROXY_OUTBOUND -j PROXY_OUT_REDIRECT',
  ];
}

export const INBOUND_EXCLUSION_ANNOTATION = 'openservicemesh.io/inbound-port-exclusion-list';

/**
 * The pod's inbound port exclusions as osm-edge's injector reads them (pkg/injector/exclusions.go: split on
 * ",", trimmed, Atoi) and writes them (iptables.go: `-I OSM_PROXY_INBOUND -p tcp --match multiport --dports
 * LIST -j RETURN`, above the redirect).
 */
function exclusionRules(annotations: Readonly<Record<string, string>>): string[] {
  const value = annotations[INBOUND_EXCLUSION_ANNOTATION];
  if (value === undefined) return [];
  const ports = value.split(',').map((port) => Number.parseInt(port.trim(), 10));
  if (ports.some((port) => !(port > 0)))
    throw new Error(`osm-edge refuses ${INBOUND_EXCLUSION_ANNOTATION}: ${value}`);
  return [`-t nat -I PROXY_INBOUND -p tcp --match multiport --dports ${ports.join(',')} -j RETURN`];
}

/**
 * osm-edge's whole interception in the pod: the lab's inbound rules with the pod's own inbound exclusions, then
 * the outbound ones, IPv4 and IPv6.
 */
export async function installOsmEdge(
  lab: Lab,
  backend: Backend,
  annotations: Readonly<Record<string, string>> = {},
): Promise<void> {
  await lab.installMesh(backend);
  const commands = [
    ...[...exclusionRules(annotations), ...outboundRules('127.0.0.1/32')].map(
      (rule) => `iptables-${backend} ${rule}`,
    ),
    ...[...exclusionRules(annotations), ...outboundRules('::1/128')].map(
      (rule) => `ip6tables-${backend} ${rule}`,
    ),
  ];
  const result = await lab.run(lab.pod, ['sh', '-ec', commands.join('\n')]);
  if (result.exitCode !== 0) throw new Error(`installing osm-edge's outbound rules failed: ${result.stderr}`);
}

// Accepts every connection the interception sends it, so a TCP probe passes, and speaks no plaintext HTTP, TLS
// or HTTP/2, so HTTP, HTTPS and gRPC probes fail: what kubelet gets from a sidecar that demands mTLS.
const PROXY = `require('node:net')
  .createServer((s) => { s.on('error', () => {}); s.end('PROXY\\n'); })
  .listen({ port: ${PROXY_PORT}, host: '::' }, () => process.stdout.write('ready\\n'));`;

export async function startSidecarProxy(procs: Processes, lab: Lab, timeoutMs: number): Promise<void> {
  const proxy = procs.start('sidecar proxy', lab.pod, [process.execPath, '-e', PROXY]);
  await proxy.waitFor((line) => line === 'ready', timeoutMs);
}
