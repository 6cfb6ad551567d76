// docs/architecture.md's layout of src/ is the code's: every room (directory) of src/ and every file at its top has
// a place in the section "The layout of src/", so a room added or moved without its paragraph fails here.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
const layout = page.slice(page.indexOf('\n## The layout of src/\n'));

/** src/'s directories, as `rewrite/resources/`, and its top-level files, as `cli.ts`. */
function rooms(dir = '', top = true): string[] {
  return readdirSync(join(ROOT, 'src', dir), { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return [`${dir}${entry.name}/`, ...rooms(`${dir}${entry.name}/`, false)];
    return top && entry.name.endsWith('.ts') ? [entry.name] : [];
  });
}

describe('docs/architecture.md', () => {
  it('has a layout section', () => {
    expect(layout.length).toBeGreaterThan(100);
  });

  it.each(rooms())('names src/%s in the layout', (room) => {
    // A nested room may be named by its last part under its parent's paragraph (`webhook/tls/` or `tls/`).
    const last = room.endsWith('/') ? `${room.split('/').at(-2)}/` : room;
    expect(layout.includes(`\`${room}\``) || layout.includes(`\`${last}\``), room).toBe(true);
  });
});
