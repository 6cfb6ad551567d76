// Where the probe table comes from: `--probes FILE`, else env OSM_HEALTHCHECK_PROBES, else none at all
// (a plain drop-in for osm-edge's injector, serving only the header-driven /osm-healthcheck).

import { readFile } from 'node:fs/promises';
import { TableError } from '../errors.js';
import { PROBES_ENV } from '../scheme.js';
import { parseProbeTableJson } from './parse.js';
import type { ProbeTable } from './types.js';

export interface TableSource {
  file?: string | undefined;
  env?: string | undefined;
}

export async function loadProbeTable(source: TableSource): Promise<ProbeTable | undefined> {
  if (source.file !== undefined) {
    let text: string;
    try {
      text = await readFile(source.file, 'utf8');
    } catch (err) {
      throw new TableError('', `cannot read probe table file ${source.file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    return parseProbeTableJson(text, `probe table file ${source.file}`);
  }
  if (source.env !== undefined && source.env.trim() !== '') {
    return parseProbeTableJson(source.env, `env ${PROBES_ENV}`);
  }
  return undefined;
}
