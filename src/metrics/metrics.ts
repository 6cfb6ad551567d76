// What the companion records for Prometheus, as an interface with no prom-client behind it: the routes depend on
// this, and registry.ts (which loads prom-client, ~20 ms of start-up) can come in after the listeners are up.
// Every label value is a table entry or one of the fixed sets below, never request data: a hostile client
// cannot grow the series set.

import type { Verdict } from '../probe/result.js';
import type { ListenerRole } from '../scheme.js';
import type { ProbeEntry } from '../table/types.js';

/** A header-driven probe on /osm-healthcheck: `Original-Tcp-Port` runs a TCP connect, `Original-Http-Port` a GET. */
export type HeaderProbe = 'tcpSocket' | 'httpGet';

/** What became of a request on /osm-healthcheck. */
export const HEADER_CHECK_OUTCOMES = [
  /** `Original-Tcp-Port`: a TCP connect was run. */
  'tcp',
  /** `Original-Http-Port`: an HTTP GET was run. */
  'http',
  /** osm-edge's wrap of one of the companion's own probe paths: that table entry was run. */
  'unwrapped',
  /** Missing, repeated or malformed `Original-*` headers: 400. */
  'invalid',
  /** A port outside the table / `--allowed-ports`: 403. */
  'port_not_allowed',
] as const;
export type HeaderCheckOutcome = (typeof HEADER_CHECK_OUTCOMES)[number];

export interface Metrics {
  /**
   * One probe run: a table entry (throws for an entry that is not in the table the metrics were made for: a bug),
   * or a header-driven probe. `seconds` is the prober's wall time.
   */
  probeRun(probe: ProbeEntry | HeaderProbe, verdict: Verdict, seconds: number): void;
  /** A probe refused at once because its listener already had its limit in flight. */
  gateRefused(listener: ListenerRole): void;
  /** A probe started (+1) or finished (-1) on a listener. */
  inFlight(listener: ListenerRole, delta: 1 | -1): void;
  headerCheck(outcome: HeaderCheckOutcome): void;
  /** The Content-Type of `scrape()`'s text: Prometheus' text exposition format 0.0.4. */
  readonly contentType: string;
  /** Every series, in the text exposition format. */
  scrape(): Promise<string>;
}
