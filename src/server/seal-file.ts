// Reads init's seal file once at start (src/seal/record.ts). A missing or unreadable file reads as open, with
// the reason: the companion must never refuse kubelet because a volume was not there.

import { readFile } from 'node:fs/promises';
import { parseSealRecord } from '../seal/record.js';
import type { SealVerdict } from '../seal/verdict.js';

/** The verdict in `path`; undefined when no seal file was named. */
export async function readSealFile(path: string | undefined): Promise<SealVerdict | undefined> {
  if (path === undefined || path === '') return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return {
      sealed: false,
      why: `no seal file at ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    };
  }
  return parseSealRecord(text);
}
