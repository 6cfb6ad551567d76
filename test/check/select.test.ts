// check's --kind / --container selection: what each combination selects, and the usage errors for the rest.

import { describe, expect, it } from 'vitest';
import { selectEntries } from '../../src/check/select.js';
import { parseProbeTable } from '../../src/table/parse.js';

const TABLE = parseProbeTable({
  liveness: { app: { httpGet: { port: 8080 } }, db: { tcpSocket: { port: 5432 } } },
  readiness: { app: { httpGet: { port: 8080, path: '/ready' } } },
  startup: { app: { grpc: { port: 9000 } } },
});

describe('selectEntries', () => {
  it.each([
    {
      name: 'no filter: every entry, kind by kind',
      kinds: [],
      containers: [],
      selected: ['liveness app', 'liveness db', 'readiness app', 'startup app'],
    },
    { name: 'one kind', kinds: ['liveness'], containers: [], selected: ['liveness app', 'liveness db'] },
    {
      name: 'kinds repeated and comma-separated',
      kinds: ['startup', 'readiness, liveness'],
      containers: [],
      selected: ['liveness app', 'liveness db', 'readiness app', 'startup app'],
    },
    { name: 'one container', kinds: [], containers: ['db'], selected: ['liveness db'] },
    { name: 'kind and container', kinds: ['readiness'], containers: ['app'], selected: ['readiness app'] },
  ])('$name', ({ kinds, containers, selected }) => {
    expect(selectEntries(TABLE, { kinds, containers }).map((e) => `${e.kind} ${e.container}`)).toEqual(
      selected,
    );
  });

  it.each([
    {
      name: 'an unknown kind',
      kinds: ['livenes'],
      containers: [],
      error: '--kind "livenes" is not accepted (liveness, readiness, startup)',
    },
    {
      name: 'an empty kind',
      kinds: ['liveness,'],
      containers: [],
      error: '--kind "" is not accepted (liveness, readiness, startup)',
    },
    {
      name: 'a container the table does not have',
      kinds: [],
      containers: ['app', 'web'],
      error: '--container "web" is not in the probe table (its containers: app, db)',
    },
    {
      name: 'filters that select nothing together',
      kinds: ['startup'],
      containers: ['db'],
      error:
        '--kind startup --container db selects no probe (the table has: liveness app, liveness db, readiness app, startup app)',
    },
  ])('refuses $name', ({ kinds, containers, error }) => {
    expect(() => selectEntries(TABLE, { kinds, containers })).toThrow(error);
  });

  it('refuses a table without entries', () => {
    expect(() => selectEntries(parseProbeTable({}), { kinds: [], containers: [] })).toThrow(
      'the probe table has no entries (a table with a probe to check)',
    );
  });
});
