// kubelet's decision rules (test/e2e/kubelet.ts), case by case, without a clock or a network.

import { describe, expect, it } from 'vitest';
import type { ProbeKind } from '../../src/scheme.js';
import {
  isReady,
  isStarted,
  newWorker,
  type Outcome,
  onNewContainer,
  probeTiming,
  recordResult,
  shouldProbe,
  type WorkerState,
} from './kubelet.js';

const S: Outcome = 'success';
const F: Outcome = 'failure';

/** Feeds `results` to a fresh worker; returns the published state after each, and whether it asked to restart. */
function replay(kind: ProbeKind, timing: Partial<Record<string, number>>, results: Outcome[]) {
  let worker: WorkerState = newWorker(kind);
  const trace: string[] = [];
  for (const result of results) {
    const step = recordResult(kind, worker, probeTiming(timing), result);
    worker = step.worker;
    trace.push(step.restart ? `${worker.published}+restart` : worker.published);
  }
  return { worker, trace };
}

describe('probeTiming', () => {
  it.each([
    {
      name: 'API defaults',
      probe: {},
      want: {
        initialDelaySeconds: 0,
        periodSeconds: 10,
        timeoutSeconds: 1,
        successThreshold: 1,
        failureThreshold: 3,
      },
    },
    {
      name: 'fields as given',
      probe: {
        initialDelaySeconds: 2,
        periodSeconds: 1,
        timeoutSeconds: 3,
        successThreshold: 2,
        failureThreshold: 5,
      },
      want: {
        initialDelaySeconds: 2,
        periodSeconds: 1,
        timeoutSeconds: 3,
        successThreshold: 2,
        failureThreshold: 5,
      },
    },
  ])('$name', ({ probe, want }) => {
    expect(probeTiming(probe)).toEqual(want);
  });
});

describe('initial values', () => {
  it.each([
    { name: 'readiness starts as failure', kind: 'readiness' as const, want: 'failure' },
    { name: 'liveness starts as success', kind: 'liveness' as const, want: 'success' },
    { name: 'startup starts as unknown', kind: 'startup' as const, want: 'unknown' },
  ])('$name', ({ kind, want }) => {
    expect(newWorker(kind).published).toBe(want);
  });
});

describe('shouldProbe', () => {
  const timing = probeTiming({ initialDelaySeconds: 2 });
  const idle = newWorker('liveness');
  it.each([
    { name: 'inside the initial delay', kind: 'liveness' as const, since: 1.99, started: true, want: false },
    {
      name: 'at the initial delay (whole seconds, truncated)',
      kind: 'liveness' as const,
      since: 2,
      started: true,
      want: true,
    },
    {
      name: 'liveness waits for the startup probe',
      kind: 'liveness' as const,
      since: 5,
      started: false,
      want: false,
    },
    {
      name: 'readiness waits for the startup probe',
      kind: 'readiness' as const,
      since: 5,
      started: false,
      want: false,
    },
    { name: 'startup probes until started', kind: 'startup' as const, since: 5, started: false, want: true },
    { name: 'startup stops once started', kind: 'startup' as const, since: 5, started: true, want: false },
  ])('$name', ({ kind, since, started, want }) => {
    expect(shouldProbe(kind, idle, timing, { secondsSinceStart: since, started })).toBe(want);
  });

  it('a worker on hold does not probe', () => {
    const held = { ...newWorker('liveness'), onHold: true };
    expect(shouldProbe('liveness', held, probeTiming({}), { secondsSinceStart: 9, started: true })).toBe(
      false,
    );
  });
});

describe('recordResult', () => {
  it.each([
    {
      name: 'readiness: one success at successThreshold 1',
      kind: 'readiness' as const,
      timing: {},
      results: [S],
      trace: ['success'],
    },
    {
      name: 'readiness: successThreshold 2 needs two in a row',
      kind: 'readiness' as const,
      timing: { successThreshold: 2 },
      results: [S, F, S, S],
      trace: ['failure', 'failure', 'failure', 'success'],
    },
    {
      name: 'readiness: failureThreshold 2, never a restart',
      kind: 'readiness' as const,
      timing: { failureThreshold: 2 },
      results: [S, F, F, F],
      trace: ['success', 'success', 'failure', 'failure'],
    },
    {
      name: 'liveness: stays success below failureThreshold',
      kind: 'liveness' as const,
      timing: {},
      results: [F, F, S, F, F],
      trace: ['success', 'success', 'success', 'success', 'success'],
    },
    {
      name: 'liveness: failureThreshold in a row restarts',
      kind: 'liveness' as const,
      timing: {},
      results: [F, F, F],
      trace: ['success', 'success', 'failure+restart'],
    },
    {
      name: 'startup: unknown until a result crosses a threshold',
      kind: 'startup' as const,
      timing: { failureThreshold: 2 },
      results: [F, S],
      trace: ['unknown', 'success'],
    },
    {
      name: 'startup: failureThreshold in a row restarts',
      kind: 'startup' as const,
      timing: { failureThreshold: 2 },
      results: [F, F],
      trace: ['unknown', 'failure+restart'],
    },
  ])('$name', ({ kind, timing, results, trace }) => {
    expect(replay(kind, timing, results).trace).toEqual(trace);
  });

  it('a restart puts the worker on hold with its run zeroed', () => {
    const { worker } = replay('liveness', {}, [F, F, F]);
    expect(worker).toEqual({ published: 'failure', lastResult: F, resultRun: 0, onHold: true });
  });
});

describe('onNewContainer', () => {
  it.each([
    {
      name: 'liveness: success again and off hold',
      kind: 'liveness' as const,
      results: [F, F, F],
      want: { published: 'success', lastResult: F, resultRun: 0, onHold: false },
    },
    {
      name: 'startup: unknown again and off hold',
      kind: 'startup' as const,
      results: [F, F, F],
      want: { published: 'unknown', lastResult: F, resultRun: 0, onHold: false },
    },
    // worker.go keeps lastResult and resultRun: the new container's first success can publish at once.
    {
      name: 'readiness: failure again, its run of successes kept',
      kind: 'readiness' as const,
      results: [S, S],
      want: { published: 'failure', lastResult: S, resultRun: 2, onHold: false },
    },
  ])('$name', ({ kind, results, want }) => {
    expect(onNewContainer(kind, replay(kind, {}, results).worker)).toEqual(want);
  });
});

describe('started and ready', () => {
  it.each([
    {
      name: 'no startup probe: started',
      startup: undefined,
      readiness: undefined,
      started: true,
      ready: true,
    },
    {
      name: 'startup unknown: neither',
      startup: 'unknown' as const,
      readiness: 'success' as const,
      started: false,
      ready: false,
    },
    {
      name: 'startup failed: neither',
      startup: 'failure' as const,
      readiness: undefined,
      started: false,
      ready: false,
    },
    {
      name: 'started, readiness failure: not ready',
      startup: 'success' as const,
      readiness: 'failure' as const,
      started: true,
      ready: false,
    },
    {
      name: 'started, readiness success: ready',
      startup: 'success' as const,
      readiness: 'success' as const,
      started: true,
      ready: true,
    },
    {
      name: 'started, no readiness probe: ready',
      startup: 'success' as const,
      readiness: undefined,
      started: true,
      ready: true,
    },
  ])('$name', ({ startup, readiness, started, ready }) => {
    expect(isStarted(startup)).toBe(started);
    expect(isReady(isStarted(startup), readiness)).toBe(ready);
  });
});
