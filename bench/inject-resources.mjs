// What `inject` writes as the companion's resources today: asked of the CLI itself, so the fleet and contention
// tables judge the defaults that ship (src/rewrite/resources/defaults.ts), not a copy of them.

import { execFileSync } from 'node:child_process';
import { parseMemory, parseMilliCpu } from './kube-resources.mjs';

const POD = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'bench' },
  spec: { containers: [{ name: 'app', image: 'app', livenessProbe: { tcpSocket: { port: 8080 } } }] },
});

/** `{ requests, limits, milliCpu, requestBytes, limitBytes }` of the companion container `cli inject` adds. */
export function injectResources(cli = 'dist/cli.mjs') {
  const out = execFileSync(process.execPath, [cli, 'inject', '-f', '-', '-o', 'json'], {
    input: POD,
    encoding: 'utf8',
  });
  const pod = JSON.parse(out);
  const companion = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find(
    (c) => c.name === 'osm-healthcheck',
  );
  if (companion === undefined) throw new Error('inject added no osm-healthcheck container');
  const { requests, limits } = companion.resources;
  return {
    requests,
    limits,
    milliCpu: parseMilliCpu(requests.cpu),
    requestBytes: parseMemory(requests.memory),
    limitBytes: parseMemory(limits.memory),
  };
}
