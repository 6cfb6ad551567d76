// The AdmissionResponse's `warnings`, shaped so the API server passes every one of them on to kubectl unchanged.
// What it does with them (kubernetes/kubernetes, staging/src/k8s.io/apiserver):
// - pkg/admission/plugin/webhook/mutating/dispatcher.go adds each through warning.AddWarning;
// - pkg/endpoints/filters/warning.go drops an empty or repeated text, and once the request's warnings pass
//   truncateAtTotalRunes (4096 runes, from every source) cuts each to truncateItemRunes (256) and drops the rest;
// - k8s.io/apimachinery/pkg/util/net NewWarningHeader refuses (so the warning is lost) text that is not valid
//   UTF-8 or holds a control character.
// The API doc (k8s.io/api/admission/v1 AdmissionResponse.warnings): "Limit warnings to 120 characters if
// possible. Warnings over 256 characters and large numbers of warnings may be truncated."

export const WARNING_LIMITS = {
  /** Runes per warning, the prefix included: the API server's truncateItemRunes. */
  itemRunes: 256,
  /**
   * Runes for all of ours: half the API server's 4096, which other webhooks and the API itself share, so ours
   * never push the request into truncation.
   */
  totalRunes: 2048,
} as const;

const ELLIPSIS = '…';

/** One printable line: control characters (newlines among them) become spaces, runs of spaces one. */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes.
  return text.replaceAll(/[\u0000-\u001f\u007f-\u009f\s]+/gu, ' ').trim();
}

/** At most `runes` code points (what Go counts), an ellipsis marking a cut. */
function cut(text: string, runes: number): string {
  const points = Array.from(text);
  return points.length <= runes ? text : `${points.slice(0, runes - 1).join('')}${ELLIPSIS}`;
}

const runeLength = (text: string): number => Array.from(text).length;

/** Lone surrogates (no UTF-8 for them) become U+FFFD, as Node's encoder would write them anyway. */
function wellFormed(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/**
 * `prefix` + each warning, one printable line each, none repeated, each within itemRunes, all within totalRunes;
 * warnings past the total are counted in one last line.
 */
export function admissionWarnings(warnings: readonly string[], prefix: string): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const warning of warnings) {
    const text = oneLine(wellFormed(warning));
    const line = cut(`${prefix}${text}`, WARNING_LIMITS.itemRunes);
    if (text === '' || seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
  }
  let used = 0;
  const kept: string[] = [];
  for (const [index, line] of lines.entries()) {
    // Room for this line, and for the summary line should the next ones not fit.
    const summary = index < lines.length - 1 ? runeLength(summaryLine(prefix, lines.length)) : 0;
    if (used + runeLength(line) + summary > WARNING_LIMITS.totalRunes) {
      kept.push(summaryLine(prefix, lines.length - index));
      return kept;
    }
    used += runeLength(line);
    kept.push(line);
  }
  return kept;
}

function summaryLine(prefix: string, count: number): string {
  return `${prefix}${count} more warning${count === 1 ? '' : 's'} not shown: the webhook's log has them all`;
}
