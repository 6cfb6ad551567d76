// The probe table as inject writes it. Every entry goes through serve's own validator and comes back in one
// canonical form, so serve accepts every table inject emits and inject(inject(x)) == inject(x).

import { PROBE_KINDS, PROBES_ENV, type ProbeKind } from '../scheme.js';
import { parseProbeTable, parseProbeTableJson } from '../table/parse.js';
import type { ProbeEntry, ProbeEntryDocument, ProbeTable, ProbeTableDocument } from '../table/types.js';

export interface TableRow {
  kind: ProbeKind;
  container: string;
  entry: ProbeEntryDocument;
}

/**
 * The canonical document of a parsed entry: path, scheme and timeoutSeconds always written, empty headers and
 * an empty gRPC service left out. Parsing it again gives the same entry, so this is a fixed point.
 */
export function entryDocument(entry: ProbeEntry): ProbeEntryDocument {
  const { handler, timeoutSeconds } = entry;
  switch (handler.type) {
    case 'httpGet': {
      const httpGet: NonNullable<ProbeEntryDocument['httpGet']> = {
        path: handler.path,
        port: handler.port,
        scheme: handler.scheme,
      };
      if (handler.httpHeaders.length > 0) {
        httpGet.httpHeaders = handler.httpHeaders.map(({ name, value }) => ({ name, value }));
      }
      return { httpGet, timeoutSeconds };
    }
    case 'tcpSocket':
      return { tcpSocket: { port: handler.port }, timeoutSeconds };
    case 'grpc':
      return {
        grpc:
          handler.service === '' ? { port: handler.port } : { port: handler.port, service: handler.service },
        timeoutSeconds,
      };
    default: {
      const unreachable: never = handler;
      throw new Error(`unhandled probe handler ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * Validates one entry with serve's parser and returns its canonical document. Throws TableError whose path
 * starts with `<kind>.<container>.`.
 */
export function canonicalEntry(kind: ProbeKind, container: string, raw: unknown): ProbeEntryDocument {
  const entry = parseProbeTable({ [kind]: { [container]: raw } })[kind].get(container);
  if (entry === undefined) throw new Error(`probe table lost ${kind}.${container}`);
  return entryDocument(entry);
}

/** The table an earlier inject wrote into the companion's env; throws TableError when it is not valid. */
export function readTable(json: string): ProbeTable {
  return parseProbeTableJson(json, `env ${PROBES_ENV}`);
}

/** Rows as a table document: kinds in the order liveness, readiness, startup; containers in row order. */
export function tableDocument(rows: readonly TableRow[]): ProbeTableDocument {
  const doc: ProbeTableDocument = {};
  for (const kind of PROBE_KINDS) {
    const ofKind = rows.filter((row) => row.kind === kind);
    if (ofKind.length > 0) doc[kind] = Object.fromEntries(ofKind.map((row) => [row.container, row.entry]));
  }
  return doc;
}

export function isEmptyTable(doc: ProbeTableDocument): boolean {
  return PROBE_KINDS.every((kind) => doc[kind] === undefined);
}
