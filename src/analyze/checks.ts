// One line of analyze's verdict on the cluster: what was checked, how it stands, and in one sentence why. `skip`
// is a check it could not make (a right it lacks, nothing to check): said, never counted as a failure.

export const CHECK_STATUSES = ['ok', 'warn', 'fail', 'skip'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

export interface Check {
  section: 'pre' | 'install' | 'data-plane';
  /** A short stable name, for -o json. */
  name: string;
  status: CheckStatus;
  detail: string;
}

/** `cannot check WHAT: needs RIGHT`: the line for a check a missing right stops. */
export function forbidden(section: Check['section'], name: string, what: string, right: string): Check {
  return { section, name, status: 'skip', detail: `cannot check ${what}: needs ${right}` };
}

/**
 * A read the API server refused: a missing right is a `skip` line naming it; any other refusal is `fail`, with
 * the API server's words (`failure`, where the check says them its own way).
 */
export function refused(
  section: Check['section'],
  name: string,
  what: string,
  failed: { status: number; message: string },
  right: string,
  failure = `cannot read ${what}: ${failed.message} (HTTP ${failed.status})`,
): Check {
  return failed.status === 403
    ? forbidden(section, name, what, right)
    : { section, name, status: 'fail', detail: failure };
}
