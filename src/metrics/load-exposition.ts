// Loads the exposition (registry.ts, and with it prom-client) on the first scrape instead of at start-up: it costs
// ~20 ms of start-up and MiB of memory in every pod (docs/metrics.md), while most companions are never scraped.
// In serve's build the import is of dist/commands/serve-metrics.cjs (scripts/build.mjs).

import type { Recorder } from './recorder.js';
import type { Exposition, ExpositionOptions } from './registry.js';

/** Resolves to the one exposition of `recorder`, loading it on the first call; concurrent first calls share it. */
export function lazyExposition(recorder: Recorder, options: ExpositionOptions): () => Promise<Exposition> {
  let loading: Promise<Exposition> | undefined;
  return () => {
    loading ??= import('./registry.js').then(
      ({ createExposition }) => createExposition(recorder, options),
      (err: unknown) => {
        // A load that failed (a file missing from the image) is tried again by the next scrape.
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };
}
