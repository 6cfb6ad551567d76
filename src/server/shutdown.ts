// When serve stops, and how: on SIGTERM (kubelet deleting the pod) it keeps answering until the app it probes is
// gone or the grace is over, then drains; on SIGINT (a person's Ctrl-C), a second SIGTERM, or with no app port
// known it drains at once.
// Kubelet signals every container of the pod together and keeps probing readiness while the app stops.

import type { Logger } from '../log.js';
import { waitForAppGone } from './app-gone.js';

export interface ShutdownOptions {
  log: Logger;
  /**
   * The app's ports at `targetHost`, read at SIGTERM: the probe table's, or without one those asked about so far
   * (app-gone.ts); none: drain at once.
   */
  appPorts: () => readonly number[];
  targetHost: string;
  graceSeconds: number;
  /** Called once when draining starts (serve's /healthz turns 503). */
  onDrain: () => void;
  /** Stops accepting, finishes in-flight probes, closes; resolves when done. */
  drain: () => Promise<unknown>;
}

/** Installs the SIGTERM/SIGINT handlers; resolves once serve has drained, with the handlers removed again. */
export function stopOnSignals(options: ShutdownOptions): Promise<void> {
  const { log } = options;
  return new Promise<void>((resolve) => {
    let draining = false;
    let waiting: AbortController | undefined;
    const drain = (signal: NodeJS.Signals) => {
      draining = true;
      options.onDrain();
      log.info({ signal }, 'draining');
      options.drain().finally(() => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        resolve();
      });
    };
    const stop = (signal: NodeJS.Signals) => {
      if (draining) return;
      if (waiting !== undefined) {
        waiting.abort(signal);
        return;
      }
      const appPorts = options.appPorts();
      if (signal === 'SIGINT' || appPorts.length === 0) {
        drain(signal);
        return;
      }
      const interrupt = new AbortController();
      waiting = interrupt;
      const started = performance.now();
      log.info(
        { signal, target: options.targetHost, appPorts, graceSeconds: options.graceSeconds },
        'waiting for the app to stop before draining',
      );
      void waitForAppGone({
        host: options.targetHost,
        ports: appPorts,
        graceMs: options.graceSeconds * 1000,
        signal: interrupt.signal,
      }).then((end) => {
        const reason = end === 'interrupted' ? `${String(interrupt.signal.reason)} while waiting` : end;
        log.info(
          { reason, waitedMs: Math.round(performance.now() - started) },
          'stopped waiting for the app',
        );
        drain(signal);
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
