// The record's value read back: what analyze accepts as a record, and the specific words for what it does not.

import { describe, expect, it } from 'vitest';
import {
  formatRecord,
  RECORD_ANNOTATION,
  readRecord,
  recordAnnotations,
  tableDigest,
} from '../../src/rewrite/record.js';
import { A_RECORD } from '../helpers/records.js';

const RECORD = A_RECORD;

describe('formatRecord', () => {
  it('writes its keys in one order, whatever order they came in', () => {
    const shuffled = {
      probes: RECORD.probes,
      bypass: RECORD.bypass,
      placement: RECORD.placement,
      image: RECORD.image,
      version: RECORD.version,
    };
    expect(formatRecord(shuffled)).toBe(formatRecord(RECORD));
    expect(formatRecord(RECORD)).toBe(
      '{"version":"0.1.0","image":"osm-healthcheck:0.1.0","placement":"first","bypass":"init-container","probes":"sha256:0123456789abcdef"}',
    );
  });
});

describe('tableDigest', () => {
  it('is sha256: and 16 hex digits, and tells two tables apart', () => {
    expect(tableDigest('{}')).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(tableDigest('{"liveness":{}}')).not.toBe(tableDigest('{}'));
  });
});

describe('readRecord', () => {
  it.each<{ name: string; value: unknown; problem: string }>([
    { name: 'not JSON', value: 'osm', problem: 'is no JSON: "osm"' },
    { name: 'a list', value: '[1]', problem: 'must be a JSON object, got an array' },
    { name: 'a number', value: 7, problem: 'must be a string, got 7' },
    {
      name: 'no version',
      value: JSON.stringify({ ...RECORD, version: undefined }),
      problem: 'version: must be a non-empty string, got nothing',
    },
    {
      name: 'an empty image',
      value: JSON.stringify({ ...RECORD, image: '' }),
      problem: 'image: must be a non-empty string, got ""',
    },
    {
      name: 'an unknown placement',
      value: JSON.stringify({ ...RECORD, placement: 'last' }),
      problem: 'placement: must be "native-sidecar" or "first", got "last"',
    },
  ])('$name: invalid, saying why', ({ value, problem }) => {
    expect(readRecord({ [RECORD_ANNOTATION]: value })).toEqual({ state: 'invalid', problem });
  });

  it('absent without the annotation; present with what formatRecord wrote', () => {
    expect(readRecord(undefined)).toEqual({ state: 'absent' });
    expect(readRecord({ other: 'x' })).toEqual({ state: 'absent' });
    expect(readRecord({ [RECORD_ANNOTATION]: formatRecord(RECORD) })).toEqual({
      state: 'present',
      record: RECORD,
    });
  });
});

describe('recordAnnotations', () => {
  it('sets the record unless the pod carries exactly that value', () => {
    expect(recordAnnotations(RECORD, undefined)).toEqual({ [RECORD_ANNOTATION]: formatRecord(RECORD) });
    expect(recordAnnotations(RECORD, { [RECORD_ANNOTATION]: formatRecord(RECORD) })).toEqual({});
    expect(recordAnnotations(RECORD, { [RECORD_ANNOTATION]: '{}' })).toEqual({
      [RECORD_ANNOTATION]: formatRecord(RECORD),
    });
  });
});
