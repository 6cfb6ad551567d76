// Finds an executable on PATH, for suites that run a tool when it is there (prometheus, kubectl).

import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The path of an executable on PATH, if there is one. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}
