// The probe table an earlier inject wrote into the companion's env, read back so its entries survive a second
// inject (a probe already rewritten keeps its original there).

import { TableError } from '../errors.js';
import { PROBES_ENV } from '../scheme.js';
import type { ProbeTable } from '../table/types.js';
import { COMPANION_NAME } from './companion.js';
import { ManifestError } from './manifest-error.js';
import type { Located } from './our-containers.js';
import { readTable } from './table.js';

/** The table an earlier inject wrote into the companion's env, so its entries survive a second inject. */
export function previousTable(containers: Located[], resource: string): ProbeTable | undefined {
  const found = containers.find(({ container }) => container.name === COMPANION_NAME);
  if (found === undefined || !Array.isArray(found.container.env)) return undefined;
  const index = found.container.env.findIndex((env) => env?.name === PROBES_ENV);
  const value = found.container.env[index]?.value;
  if (typeof value !== 'string') return undefined;
  try {
    return readTable(value);
  } catch (err) {
    if (!(err instanceof TableError)) throw err;
    const at = [found.list, found.index, 'env', index, 'value'];
    throw new ManifestError(resource, at, `the companion's probe table is invalid: ${err.message}`, {
      cause: err,
    });
  }
}
