// Requests for one probe within FRESH_MS of each other share one check of the app (src/server/shared-checks.ts).
// A test that counts checks, or wants each request judged afresh, waits this long between them, as kubelet's period
// (1 s at the least) always does.

import { FRESH_MS } from '../../src/server/shared-checks.js';

export function pastFreshWindow(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, FRESH_MS + 20));
}
