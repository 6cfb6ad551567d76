// An osm-healthcheck/status record as inject writes it, for tests that need a pod of ours: the fields fixed, the
// seal asked for or not.

import { formatRecord, type InjectionRecord } from '../../src/rewrite/record.js';

export const A_RECORD = {
  version: '0.1.0',
  image: 'osm-healthcheck:0.1.0',
  placement: 'first',
  bypass: 'init-container',
  probes: 'sha256:0123456789abcdef',
} as const satisfies InjectionRecord;

/** The annotation's value: A_RECORD, asking for the seal unless `sealed` is false. */
export const recordValue = (sealed = true, fields: Partial<InjectionRecord> = {}): string =>
  formatRecord({ ...A_RECORD, ...fields, ...(sealed ? { seal: 'node' as const } : {}) });
