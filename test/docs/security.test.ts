// docs/security.md names the test behind each claim: every test file it names exists, each section of the
// companion's part names at least one, and the analyze half's two headings are there to be written.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const PAGE = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
const named = (text: string) => [...text.matchAll(/`(test\/[^`\s]+\.test\.ts)`/g)].map((m) => m[1] as string);

/** The page's `## ` sections: heading -> text. */
function sections(): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of PAGE.split(/^## /m).slice(1)) {
    const [heading = '', ...rest] = part.split('\n');
    found.set(heading, rest.join('\n'));
  }
  return found;
}

describe('docs/security.md', () => {
  it.each([...new Set(named(PAGE))])('names %s, which exists', (file) => {
    expect(existsSync(join(ROOT, file)), file).toBe(true);
  });

  it.each([
    "The companion's ports",
    'What the init container lets past the mesh',
    'What an attacker in another pod can and cannot do',
  ])('has a test behind "%s"', (heading) => {
    const text = sections().get(heading);
    expect(text, heading).toBeDefined();
    expect(named(text ?? '').length).toBeGreaterThan(0);
  });

  it.each(["The webhook's ports", 'RBAC and Secrets'])('has the heading "%s"', (heading) => {
    expect(sections().has(heading)).toBe(true);
  });
});
