// What the docs tests read from Markdown, as GitHub renders it: the links a page makes and the anchors its headings
// get. Fenced code blocks and inline code are text, not Markdown, so neither links nor headings come from them.

/** The page's lines, those of fenced code blocks blanked (so line numbers stay). */
function outsideFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (open !== undefined && open[0] === fence[0] && open.length >= fence.length) fence = undefined;
      return '';
    }
    if (open !== undefined) {
      fence = open;
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor the page's headings make; a repeated one gets -1, -2 ... as on GitHub. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of outsideFences(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

export interface Link {
  line: number;
  target: string;
}

/** The inline links `[text](target)` of the page's prose (not in code), with their 1-based line. */
export function links(markdown: string): Link[] {
  return outsideFences(markdown).flatMap((line, index) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => ({
      line: index + 1,
      target: match[1] ?? '',
    })),
  );
}
