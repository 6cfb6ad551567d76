// analyze's heap kept to what it holds: V8 sizes its heap from the machine's memory, not from a list read a page
// at a time, and lets each page's garbage (the answer's bytes, its items' strings and objects) stand across many
// pages; bounded, a run over 10,000 pods peaks near 100 MiB of RSS instead of 170-180 (BENCHMARKS.md).

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/**
 * From now on the young generation keeps its starting size (V8 reads the growth factor each time it would grow
 * it; its maximum is fixed at start-up, so that flag would be too late), and collectGarbage() collects. Once per
 * process, by the command: tests and other callers of the lists leave V8 as it is.
 */
export function boundHeap(): void {
  if (collect !== undefined) return;
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--expose-gc');
  collect = runInNewContext('gc') as () => void;
}

/** A full collection, when boundHeap() was called: between the pages of a list, whose items are dead by then. */
export function collectGarbage(): void {
  collect?.();
}
