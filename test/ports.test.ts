// Port lists on the command line (init --ports, serve --allowed-ports): accepted, normalised, refused.

import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { formatPortRanges, parseListenPorts, parsePortRanges, portSet } from '../src/ports.js';

describe('parsePortRanges', () => {
  it.each([
    { name: 'one port', text: '15901', want: '15901' },
    { name: 'one range', text: '15901-15904', want: '15901-15904' },
    { name: 'sorted', text: '16000,15901-15904', want: '15901-15904,16000' },
    { name: 'adjacent ports merge into a range', text: '15904,15903,15902,15901', want: '15901-15904' },
    { name: 'overlapping ranges merge', text: '15901-15903,15902-15910', want: '15901-15910' },
    { name: 'a range inside another', text: '1-100,50-60', want: '1-100' },
    { name: 'duplicates', text: '15901,15901', want: '15901' },
    { name: 'spaces around items', text: ' 15901 , 15902 ', want: '15901-15902' },
    { name: 'single-port range', text: '8080-8080', want: '8080' },
    { name: 'the extremes', text: '1,65535', want: '1,65535' },
  ])('$name: "$text" -> "$want"', ({ text, want }) => {
    expect(formatPortRanges(parsePortRanges(text))).toBe(want);
  });

  it.each([
    {
      name: 'zero',
      text: '0',
      message: `--ports "0" is not a port (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000)`,
    },
    { name: 'too big', text: '70000', message: '--ports "70000" is not a port (ports 1-65535' },
    {
      name: 'too big in a range',
      text: '15901-70000',
      message: '--ports "70000" in "15901-70000" is not a port (',
    },
    { name: 'leading zero', text: '01590', message: '--ports "01590" is not a port (' },
    {
      name: 'words',
      text: 'a-b',
      message: `--ports "a-b" is not a port or a range (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000)`,
    },
    {
      name: 'empty',
      text: '',
      message: `--ports is empty (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000)`,
    },
    {
      name: 'blank',
      text: '  ',
      message: `--ports is empty (ports 1-65535 and ranges, comma-separated, e.g. 15901-15904,16000)`,
    },
    {
      name: 'empty item',
      text: '15901,,15902',
      message: '--ports "" in "15901,,15902" is not a port or a range (',
    },
    { name: 'trailing comma', text: '15901,', message: '--ports "" in "15901," is not a port or a range (' },
    {
      name: 'backwards range',
      text: '15904-15901',
      message: '--ports range "15904-15901" runs backwards (a range runs low-high',
    },
    { name: 'negative', text: '-1', message: '"-1" is not a port or a range' },
    { name: 'open range', text: '15901-', message: '"15901-" is not a port or a range' },
    { name: 'colon range', text: '15901:15904', message: '"15901:15904" is not a port or a range' },
    { name: 'six digits', text: '159010', message: '"159010" is not a port or a range' },
    { name: 'decimal', text: '15901.5', message: '"15901.5" is not a port or a range' },
  ])('$name: "$text" is refused', ({ text, message }) => {
    expect(() => parsePortRanges(text)).toThrow(UsageError);
    expect(() => parsePortRanges(text)).toThrow(message);
  });
});

describe('portSet', () => {
  it.each([
    { text: '8080', want: [8080] },
    { text: '1,65535', want: [1, 65535] },
    { text: '9000-9002, 80', want: [80, 9000, 9001, 9002] },
  ])('$text covers $want', ({ text, want }) => {
    expect([...portSet(parsePortRanges(text))].sort((a, b) => a - b)).toEqual(want);
  });

  it('names the flag it parses in every refusal', () => {
    expect(() => parsePortRanges('0', '--allowed-ports')).toThrow('--allowed-ports "0" is not a port (');
    expect(() => parsePortRanges('', '--allowed-ports')).toThrow('--allowed-ports is empty');
  });
});

describe('parseListenPorts: serve --ports and wait --ports', () => {
  it.each([
    {
      name: 'the defaults',
      text: '15901,15902,15903,15904',
      want: { liveness: 15901, readiness: 15902, startup: 15903, healthcheck: 15904 },
    },
    {
      name: 'spaces, and 0 for a port the system chooses',
      text: ' 0, 0 ,0,0',
      want: { liveness: 0, readiness: 0, startup: 0, healthcheck: 0 },
    },
  ])('$name', ({ text, want }) => {
    expect(parseListenPorts(text)).toEqual(want);
  });

  it.each([
    { name: 'three ports', text: '1,2,3' },
    { name: 'five ports', text: '1,2,3,4,5' },
    { name: 'too big', text: '1,2,3,65536' },
    { name: 'a name', text: '1,2,3,http' },
    { name: 'an empty item', text: '1,,3,4' },
    { name: 'a negative port', text: '1,2,3,-4' },
  ])('refuses $name', ({ text }) => {
    expect(() => parseListenPorts(text)).toThrow(
      `--ports ${JSON.stringify(text)} is not accepted (four ports 0-65535: liveness,readiness,startup,healthcheck)`,
    );
    expect(() => parseListenPorts(text, 'env OSM_HEALTHCHECK_PORTS')).toThrow(
      `env OSM_HEALTHCHECK_PORTS ${JSON.stringify(text)} is not accepted (`,
    );
  });
});
