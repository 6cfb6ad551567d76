// grpcVerdict's rules on their own, for outcomes a real server in grpc.test.ts cannot easily produce.

import { describe, expect, it } from 'vitest';
import { type GrpcOutcome, grpcVerdict } from '../../src/probe/grpc-verdict.js';

const ctx = { addr: '10.1.2.3:14003', service: 'orders', elapsedMs: 3, timeoutMs: 900 };
const prefix = 'grpc 10.1.2.3:14003 service "orders"';

describe('grpcVerdict', () => {
  it.each<{ name: string; outcome: GrpcOutcome; verdict: string; message: string; reason?: string }>([
    {
      name: 'SERVING',
      outcome: { kind: 'response', status: 'SERVING' },
      verdict: 'success',
      message: `${prefix} -> SERVING in 3 ms`,
    },
    {
      name: 'a status this proto version does not name',
      outcome: { kind: 'response', status: '7' },
      verdict: 'failure',
      reason: 'grpc_status',
      message: `${prefix} failed: service unhealthy (responded with "7") after 3 ms`,
    },
    {
      name: 'the app itself answers UNAVAILABLE',
      outcome: { kind: 'error', code: 'UNAVAILABLE', details: 'draining', connected: true },
      verdict: 'failure',
      reason: 'grpc_status',
      message: `${prefix} failed: health rpc probe failed: UNAVAILABLE: draining after 3 ms`,
    },
    {
      name: 'connection dropped mid-call, still READY',
      outcome: { kind: 'error', code: 'INTERNAL', details: 'Received RST_STREAM', connected: true },
      verdict: 'failure',
      reason: 'grpc_status',
      message: `${prefix} failed: health rpc probe failed: INTERNAL: Received RST_STREAM after 3 ms`,
    },
    {
      name: 'no transport when the deadline passed',
      outcome: { kind: 'error', code: 'DEADLINE_EXCEEDED', details: 'Deadline exceeded', connected: false },
      verdict: 'failure',
      reason: 'timeout',
      message: `${prefix} failed to connect within 900 ms`,
    },
  ])('$name', ({ outcome, verdict, message, reason }) => {
    expect(grpcVerdict(outcome, ctx)).toEqual({
      verdict,
      status: verdict === 'success' ? 200 : 503,
      message,
      ...(reason === undefined ? {} : { reason }),
    });
  });
});
