// Kubelet's events read as liveness evidence, pure: the Killing and Unhealthy events kubelet writes for a failed
// liveness probe count, by container of a pod, within the window; readiness' and other kills do not; events
// written through events.k8s.io (eventTime, series) read as those through core/v1 (first/lastTimestamp, count).

import { describe, expect, it } from 'vitest';
import { livenessEvents, readEvent } from '../../../src/analyze/probes/kubelet-events.js';

type Json = Record<string, unknown>;

const SINCE = Date.parse('2026-12-06T13:00:00Z');
const at = (minute: number) => new Date(SINCE + minute * 60_000).toISOString();

/** An event as kubelet's recorder writes it (core/v1, aggregated: count, first and last time). */
const event = (reason: string, message: string, over: Json = {}): Json => ({
  metadata: { name: 'web-1.1', namespace: 'shop', creationTimestamp: at(10) },
  involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-1', fieldPath: 'spec.containers{app}' },
  reason,
  message,
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: at(10),
  lastTimestamp: at(12),
  count: 3,
  type: reason === 'Killing' ? 'Normal' : 'Warning',
  ...over,
});
const KILLED = 'Container app failed liveness probe, will be restarted';
const FAILED = 'Liveness probe failed: HTTP probe failed with statuscode: 500';

describe('readEvent', () => {
  it.each([
    { name: 'a kill for failed liveness', e: event('Killing', KILLED), kill: true, count: 3 },
    { name: 'a failed liveness probe', e: event('Unhealthy', FAILED), kill: false, count: 3 },
    {
      name: 'an errored liveness probe',
      e: event('Unhealthy', 'Liveness probe errored: rpc error'),
      kill: false,
      count: 3,
    },
    {
      name: 'a failed readiness probe',
      e: event('Unhealthy', 'Readiness probe failed: 503'),
      kill: undefined,
    },
    {
      name: 'a kill for a failed startup probe',
      e: event('Killing', 'Container app failed startup probe, will be restarted'),
      kill: undefined,
    },
    { name: 'a kill on a rollout', e: event('Killing', 'Stopping container app'), kill: undefined },
    {
      name: 'an event on another kind',
      e: event('Killing', KILLED, { involvedObject: { kind: 'Node', name: 'n' } }),
      kill: undefined,
    },
    {
      name: 'before the window',
      e: event('Killing', KILLED, { firstTimestamp: at(-90), lastTimestamp: at(-80) }),
      kill: undefined,
    },
    {
      name: 'aggregated since before the window: once, its other times unknown',
      e: event('Killing', KILLED, { firstTimestamp: at(-90), lastTimestamp: at(5) }),
      kill: true,
      count: 1,
    },
    {
      name: 'written through events.k8s.io: eventTime and series',
      e: event('Killing', KILLED, {
        firstTimestamp: null,
        lastTimestamp: null,
        count: undefined,
        eventTime: at(10),
        series: { count: 4, lastObservedTime: at(14) },
      }),
      kill: true,
      count: 4,
    },
    {
      name: 'no fieldPath: the container named in the kill',
      e: event('Killing', KILLED, { involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-1' } }),
      kill: true,
      count: 3,
    },
  ])('$name', ({ e, kill, count }) => {
    const read = readEvent(e, SINCE);
    if (kill === undefined) expect(read).toBeUndefined();
    else expect(read).toMatchObject({ pod: 'web-1', container: 'app', kill, count });
  });
});

describe('livenessEvents', () => {
  it('sums per container of a pod: kills with their times, failures with their timeouts and the last message', () => {
    const sidecar = { kind: 'Pod', namespace: 'shop', name: 'web-1', fieldPath: 'spec.initContainers{log}' };
    const found = livenessEvents(
      [
        event('Killing', KILLED),
        event('Unhealthy', FAILED, { lastTimestamp: at(12) }),
        event(
          'Unhealthy',
          'Liveness probe failed: Get "http://10.0.0.1:8080/live": context deadline exceeded',
          {
            count: 2,
            lastTimestamp: at(11),
          },
        ),
        event('Killing', 'Container log failed liveness probe, will be restarted', {
          involvedObject: sidecar,
          count: 1,
          firstTimestamp: at(20),
          lastTimestamp: at(20),
        }),
        event('Unhealthy', 'Readiness probe failed: 503'),
      ],
      SINCE,
    );
    expect(found).toEqual([
      {
        namespace: 'shop',
        pod: 'web-1',
        container: 'app',
        kills: 3,
        killedAt: [Date.parse(at(10)), Date.parse(at(12))],
        failures: 5,
        timeouts: 2,
        message: FAILED,
      },
      {
        namespace: 'shop',
        pod: 'web-1',
        container: 'log',
        kills: 1,
        killedAt: [Date.parse(at(20))],
        failures: 0,
        timeouts: 0,
        message: undefined,
      },
    ]);
  });
});
