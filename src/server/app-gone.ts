// Stop order: on SIGTERM kubelet signals every container of the pod at once and keeps probing readiness while the
// app drains, so the companion keeps answering until the app is gone (no port of the probe table, or without one
// no port /osm-healthcheck was asked about, accepts a connection any more) or the pod's grace period is over.
// Pure decisions here, plus one thin connect.

import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { badFlagValue } from '../flags.js';
import { entries } from '../table/parse.js';
import type { ProbeTable } from '../table/types.js';

/** How many ports asked about without a table are remembered: a pod's app has a few; no client may grow more. */
export const MAX_ASKED_PORTS = 64;
/** Kubernetes' default terminationGracePeriodSeconds. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 30;
// Kubelet probes every second at the fastest: a quarter of that notices the app gone well before its next probe.
const POLL_MS = 250;
const CONNECT_TIMEOUT_MS = 200;

/** What one connect to an app port found: `silent` is a connect that timed out. */
export type PortState = 'accepting' | 'closed' | 'silent';
export type WaitEnd = 'app gone' | 'grace over' | 'interrupted';

/** The ports whose closing means the app is gone: every port the probe table probes, ascending. */
export function appPorts(table: ProbeTable | undefined): number[] {
  const ports = new Set(table === undefined ? [] : entries(table).map((e) => e.handler.port));
  return [...ports].sort((a, b) => a - b);
}

/**
 * Without a probe table (a drop-in for osm-edge's or OSM's injector, which writes only `Original-*` headers) the
 * app's ports are those kubelet's probes named on /osm-healthcheck: remembered as they come, the first
 * MAX_ASKED_PORTS of them.
 */
export class AskedPorts {
  private readonly seen = new Set<number>();

  add(port: number): void {
    if (this.seen.size < MAX_ASKED_PORTS) this.seen.add(port);
  }

  /** Every port asked about so far, ascending. */
  sorted(): number[] {
    return [...this.seen].sort((a, b) => a - b);
  }
}

/**
 * After one poll of every app port: the app is gone once no port accepts. A silent port is not gone: in the pod a
 * connect to the pod's own address only times out when the app's accept queue is full, i.e. it is still there.
 */
export function decide(
  states: readonly PortState[],
  elapsedMs: number,
  graceMs: number,
): 'wait' | Exclude<WaitEnd, 'interrupted'> {
  if (states.every((s) => s === 'closed')) return 'app gone';
  return elapsedMs >= graceMs ? 'grace over' : 'wait';
}

/** `--shutdown-grace` or its env, in whole seconds as terminationGracePeriodSeconds is; `field` names the source. */
export function parseShutdownGrace(text: string, field: string): number {
  const seconds = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(seconds * 1000)) {
    throw badFlagValue(field, text, "whole seconds, 0 or more: the pod's terminationGracePeriodSeconds");
  }
  return seconds;
}

/** Connects once and closes at once without sending a byte, as a TCP probe does. */
export function portState(host: string, port: number, timeoutMs: number): Promise<PortState> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve('accepting');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('silent');
    });
    // Refused, unreachable, address gone: nothing there accepts any more.
    socket.once('error', () => resolve('closed'));
  });
}

export interface WaitOptions {
  host: string;
  ports: readonly number[];
  graceMs: number;
  /** Aborted by a second SIGTERM or a SIGINT: stop waiting at once. */
  signal: AbortSignal;
}

/** Polls the app's ports every POLL_MS until none accepts, the grace is over, or `signal` is aborted. */
export async function waitForAppGone(options: WaitOptions): Promise<WaitEnd> {
  const started = performance.now();
  while (!options.signal.aborted) {
    const round = performance.now();
    const states = await Promise.all(
      options.ports.map((port) => portState(options.host, port, CONNECT_TIMEOUT_MS)),
    );
    if (options.signal.aborted) break;
    const now = performance.now();
    const decision = decide(states, now - started, options.graceMs);
    if (decision !== 'wait') return decision;
    const pause = Math.min(POLL_MS - (now - round), options.graceMs - (now - started));
    // An abort ends the pause early; the loop's condition then reports it.
    await sleep(Math.max(0, pause), undefined, { signal: options.signal }).catch(() => {});
  }
  return 'interrupted';
}
