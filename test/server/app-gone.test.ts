// The stop-order wait: its pure decisions by table, and the wait itself against real listeners on loopback.

import { describe, expect, it } from 'vitest';
import {
  AskedPorts,
  appPorts,
  decide,
  MAX_ASKED_PORTS,
  type PortState,
  parseShutdownGrace,
  portState,
  waitForAppGone,
} from '../../src/server/app-gone.js';
import { parseProbeTable } from '../../src/table/parse.js';
import { closedPort, tcpApp } from '../helpers/apps.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';

describe('AskedPorts: without a table, the ports /osm-healthcheck was asked about', () => {
  it('keeps each once, ascending', () => {
    const asked = new AskedPorts();
    for (const port of [8080, 5432, 8080, 9000, 5432]) asked.add(port);
    expect(asked.sorted()).toEqual([5432, 8080, 9000]);
  });

  it('keeps the first MAX_ASKED_PORTS and no more, whatever a client asks', () => {
    const asked = new AskedPorts();
    for (let port = 1; port <= 1000; port++) asked.add(port);
    expect(asked.sorted()).toEqual(Array.from({ length: MAX_ASKED_PORTS }, (_, i) => i + 1));
    asked.add(1);
    expect(asked.sorted()).toHaveLength(MAX_ASKED_PORTS);
  });

  it('has none before any probe', () => {
    expect(new AskedPorts().sorted()).toEqual([]);
  });
});

describe('appPorts', () => {
  it.each([
    { name: 'no table', table: undefined, want: [] },
    {
      name: 'every handler kind, each port once, ascending',
      table: {
        liveness: { app: { httpGet: { port: 8080 } }, side: { grpc: { port: 9000 } } },
        readiness: { app: { tcpSocket: { port: 8080 } } },
        startup: { app: { httpGet: { port: 443, scheme: 'HTTPS' } } },
      },
      want: [443, 8080, 9000],
    },
  ])('$name', ({ table, want }) => {
    expect(appPorts(table === undefined ? undefined : parseProbeTable(table))).toEqual(want);
  });
});

describe('decide', () => {
  it.each<{ name: string; states: PortState[]; elapsedMs: number; want: ReturnType<typeof decide> }>([
    { name: 'every port closed', states: ['closed', 'closed'], elapsedMs: 100, want: 'app gone' },
    { name: 'one port still accepting', states: ['closed', 'accepting'], elapsedMs: 100, want: 'wait' },
    { name: 'a silent port is not gone', states: ['closed', 'silent'], elapsedMs: 100, want: 'wait' },
    { name: 'still up when the grace is over', states: ['accepting'], elapsedMs: 1000, want: 'grace over' },
    { name: 'gone wins over the grace', states: ['closed'], elapsedMs: 5000, want: 'app gone' },
  ])('$name', ({ states, elapsedMs, want }) => {
    expect(decide(states, elapsedMs, 1000)).toBe(want);
  });
});

describe('parseShutdownGrace', () => {
  it.each([
    { text: '0', want: 0 },
    { text: '30', want: 30 },
    { text: '3600', want: 3600 },
  ])('accepts $text', ({ text, want }) => {
    expect(parseShutdownGrace(text, '--shutdown-grace')).toBe(want);
  });

  it.each(['', '-1', '1.5', '30s', ' 30', '1e3', '99999999999999999'])(
    'refuses "%s", naming the field',
    (text) => {
      expect(() => parseShutdownGrace(text, 'env OSM_HEALTHCHECK_SHUTDOWN_GRACE_SECONDS')).toThrow(
        `env OSM_HEALTHCHECK_SHUTDOWN_GRACE_SECONDS ${JSON.stringify(text)} is not accepted (whole seconds, 0 or more: the pod's terminationGracePeriodSeconds)`,
      );
    },
  );
});

describe('portState', () => {
  it('tells a listening port from a closed one', async () => {
    const app = await tcpApp((s) => s.destroy());
    try {
      expect(await portState('127.0.0.1', app.port, 1000)).toBe('accepting');
      expect(await portState('127.0.0.1', await closedPort(), 1000)).toBe('closed');
    } finally {
      await app.close();
    }
  });
});

describe('waitForAppGone', () => {
  const never = new AbortController().signal;

  it('ends as soon as every port is closed', async () => {
    const ports = [await closedPort(), await closedPort()];
    expect(await waitForAppGone({ host: '127.0.0.1', ports, graceMs: 30_000, signal: never })).toBe(
      'app gone',
    );
  });

  it('waits while one port still accepts, and ends once it closes', async () => {
    const app = await tcpApp((s) => s.destroy());
    let polled = 0;
    app.server.on('connection', () => {
      // Closed after the wait has seen it open twice: the wait polls, it does not give up early.
      if (++polled === 2) void app.close();
    });
    const ports = [await closedPort(), app.port];
    const started = performance.now();
    expect(await waitForAppGone({ host: '127.0.0.1', ports, graceMs: 30_000, signal: never })).toBe(
      'app gone',
    );
    expect(polled).toBe(2);
    // Not the 30 s grace.
    expect(performance.now() - started).toBeLessThan(BUSY_MACHINE_SLACK_MS);
  });

  it('ends when the grace is over while the app stays up', async () => {
    const app = await tcpApp((s) => s.destroy());
    try {
      const started = performance.now();
      const end = await waitForAppGone({ host: '127.0.0.1', ports: [app.port], graceMs: 600, signal: never });
      expect(end).toBe('grace over');
      expect(performance.now() - started).toBeGreaterThanOrEqual(600);
      expect(performance.now() - started).toBeLessThan(600 + BUSY_MACHINE_SLACK_MS);
    } finally {
      await app.close();
    }
  });

  it('ends at once when interrupted', async () => {
    const app = await tcpApp((s) => s.destroy());
    const interrupt = new AbortController();
    app.server.once('connection', () => interrupt.abort('SIGTERM'));
    try {
      const started = performance.now();
      const end = await waitForAppGone({
        host: '127.0.0.1',
        ports: [app.port],
        graceMs: 30_000,
        signal: interrupt.signal,
      });
      expect(end).toBe('interrupted');
      // Not the 30 s grace.
      expect(performance.now() - started).toBeLessThan(BUSY_MACHINE_SLACK_MS);
    } finally {
      await app.close();
    }
  });
});
