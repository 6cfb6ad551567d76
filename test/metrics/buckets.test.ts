// Probe duration buckets: 1 ms up to the table's longest timeout, on 1-2.5-5 steps, and 0.5, 0.8, 0.9 of each timeout.

import { describe, expect, it } from 'vitest';
import { durationBuckets, longestTimeoutSeconds, probeDurationBuckets } from '../../src/metrics/buckets.js';
import { parseProbeTable } from '../../src/table/parse.js';

const UP_TO_ONE = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

describe('durationBuckets', () => {
  it.each([
    { name: 'kubelet default, 1 s', max: 1, buckets: UP_TO_ONE },
    { name: 'ends on a step: 5 s', max: 5, buckets: [...UP_TO_ONE, 2.5, 5] },
    { name: 'ends between steps: 3 s', max: 3, buckets: [...UP_TO_ONE, 2.5, 3] },
    { name: 'a long timeout: 30 s', max: 30, buckets: [...UP_TO_ONE, 2.5, 5, 10, 25, 30] },
    { name: 'smallest: 1 ms', max: 0.001, buckets: [0.001] },
  ])('$name', ({ max, buckets }) => {
    expect(durationBuckets(max)).toEqual(buckets);
  });
});

describe('probeDurationBuckets', () => {
  it.each([
    { name: 'no table: the steps up to 1 s only', table: undefined, buckets: UP_TO_ONE },
    {
      name: 'the default 1 s: 0.8 and 0.9 added, 0.5 already a step',
      table: { readiness: { app: { tcpSocket: { port: 1 } } } },
      buckets: [...UP_TO_ONE.slice(0, -1), 0.8, 0.9, 1],
    },
    {
      name: "two timeouts, 3 s and 10 s: each one's fractions, sorted, as written decimals",
      table: {
        liveness: { app: { tcpSocket: { port: 1 }, timeoutSeconds: 3 } },
        readiness: { app: { tcpSocket: { port: 1 }, timeoutSeconds: 10 } },
        startup: { app: { tcpSocket: { port: 1 }, timeoutSeconds: 3 } },
      },
      buckets: [...UP_TO_ONE, 1.5, 2.4, 2.5, 2.7, 5, 8, 9, 10],
    },
  ])('$name', ({ table, buckets }) => {
    expect(probeDurationBuckets(table === undefined ? undefined : parseProbeTable(table))).toEqual(buckets);
  });
});

describe('longestTimeoutSeconds', () => {
  it.each([
    { name: 'no table: header-driven probes get 1 s', table: undefined, seconds: 1 },
    {
      name: 'the longest entry',
      table: {
        liveness: { app: { tcpSocket: { port: 1 }, timeoutSeconds: 4 } },
        startup: { app: { grpc: { port: 2 }, timeoutSeconds: 7 } },
      },
      seconds: 7,
    },
    { name: 'entries default to 1 s', table: { readiness: { app: { tcpSocket: { port: 1 } } } }, seconds: 1 },
  ])('$name', ({ table, seconds }) => {
    expect(longestTimeoutSeconds(table === undefined ? undefined : parseProbeTable(table))).toBe(seconds);
  });
});
