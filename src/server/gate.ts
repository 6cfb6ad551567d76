// Counts probes in flight on one listener and refuses past a limit, so a flood on one port is answered at once
// with 503 instead of queueing behind (or starving) kubelet's own probes on the others.

export class Gate {
  readonly limit: number;
  private inFlight = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  enter(): boolean {
    if (this.inFlight >= this.limit) return false;
    this.inFlight++;
    return true;
  }

  leave(): void {
    this.inFlight--;
  }
}
