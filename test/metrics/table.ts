// The probe table the metrics tests record against: one entry of each handler type.

import { parseProbeTable } from '../../src/table/parse.js';
import type { ProbeEntry } from '../../src/table/types.js';

export const TABLE = parseProbeTable({
  liveness: { app: { httpGet: { port: 8080, path: '/live' }, timeoutSeconds: 3 } },
  readiness: { db: { tcpSocket: { port: 5432 } } },
  startup: { app: { grpc: { port: 9000 } } },
});

export function entry(kind: 'liveness' | 'readiness' | 'startup', container: string): ProbeEntry {
  const found = TABLE[kind].get(container);
  if (found === undefined) throw new Error(`no ${kind}.${container} in the test table`);
  return found;
}
