// Where init says its seal verdict besides its log: the seal file the companion reads, and kubelet's
// termination message (the init container's status in the pod: analyze and `kubectl describe pod` show it).

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { formatSealRecord } from '../seal/record.js';
import { describeVerdict, type SealVerdict } from '../seal/verdict.js';

/** kubelet's default terminationMessagePath; it exists only in a container kubelet started. */
export const TERMINATION_LOG = '/dev/termination-log';

/** Writes both; returns what could not be written, for the log (never fatal: the rules are what seal). */
export async function writeSealOutputs(
  verdict: SealVerdict,
  sealFile: string,
  terminationLog = TERMINATION_LOG,
): Promise<string[]> {
  const problems: string[] = [];
  try {
    await mkdir(dirname(sealFile), { recursive: true });
    await writeFile(sealFile, formatSealRecord(verdict), { mode: 0o644 });
  } catch (err) {
    problems.push(`cannot write the seal file ${sealFile}: ${(err as Error).message}`);
  }
  if (existsSync(terminationLog)) {
    try {
      await writeFile(terminationLog, `${describeVerdict(verdict)}\n`);
    } catch (err) {
      problems.push(`cannot write ${terminationLog}: ${(err as Error).message}`);
    }
  }
  return problems;
}
