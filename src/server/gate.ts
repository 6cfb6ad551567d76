// Bounds the checks of the app in flight on one listener, shared fairly by the callers' addresses: past the limit a
// check for a caller with fewer in flight takes the place of one of the caller with the most (which runs on to its
// end, uncounted, its answer still going to its caller), and a check for the caller with the most is refused at
// once with 503. So a flood cannot starve kubelet's probes, on this port or another, and the app sees at most twice
// the limit in flight: those counted, and those set aside for a fairer share (never more than the limit).
// With a probe table the shared checks (shared-checks.ts) keep a listener at one check per probe, far below it;
// the limit matters without one, where callers name the ports and paths.

import { SourceShares } from './source-shares.js';

/** One check let through: hand it back to `leave` when it ends. */
export interface Ticket {
  readonly source: string;
  /** Set aside for a caller with a fairer claim: no longer counted against the limit. */
  setAside: boolean;
}

export class Gate {
  readonly limit: number;
  private readonly shares: SourceShares<Ticket>;
  private setAside = 0;

  constructor(limit: number) {
    this.limit = limit;
    this.shares = new SourceShares(limit);
  }

  get inFlight(): number {
    return this.shares.size + this.setAside;
  }

  /**
   * A ticket for a check that `sources` all wait for, counted under the one with the fewest in flight; undefined
   * when the listener is at its limit and each of them already holds as many as any other caller.
   */
  enter(sources: Iterable<string>): Ticket | undefined {
    const byFewest = [...sources].sort((a, b) => this.shares.held(a) - this.shares.held(b));
    for (const source of byFewest) {
      // At the limit a place is taken from another caller only while fewer than `limit` are set aside.
      if (this.shares.size >= this.limit && this.setAside >= this.limit) return undefined;
      const ticket: Ticket = { source, setAside: false };
      const admission = this.shares.add(source, ticket);
      if (!admission.admitted) continue;
      if (admission.evicted !== undefined) {
        admission.evicted.setAside = true;
        this.setAside++;
      }
      return ticket;
    }
    return undefined;
  }

  leave(ticket: Ticket): void {
    if (ticket.setAside) this.setAside--;
    else this.shares.delete(ticket.source, ticket);
  }
}
