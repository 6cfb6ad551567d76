import { describe, expect, it } from 'vitest';
import { parseOriginalHeaders } from '../src/original-headers.js';

const h = (pairs: Record<string, string[] | undefined>) =>
  Object.fromEntries(Object.entries(pairs).map(([k, v]) => [k.toLowerCase(), v]));

describe('parseOriginalHeaders', () => {
  it.each([
    { name: 'tcp port', headers: { 'Original-Tcp-Port': ['8080'] }, want: { type: 'tcp', port: 8080 } },
    { name: 'tcp port 1', headers: { 'Original-Tcp-Port': ['1'] }, want: { type: 'tcp', port: 1 } },
    {
      name: 'tcp port 65535',
      headers: { 'Original-Tcp-Port': ['65535'] },
      want: { type: 'tcp', port: 65535 },
    },
    {
      name: 'http port, default path',
      headers: { 'Original-Http-Port': ['80'] },
      want: { type: 'http', port: 80, path: '/' },
    },
    {
      name: 'http port and path with query',
      headers: { 'Original-Http-Port': ['80'], 'Original-Http-Path': ['/ready?full=1'] },
      want: { type: 'http', port: 80, path: '/ready?full=1' },
    },
    {
      name: "osm-edge's wrap of our probe path",
      headers: { 'Original-Http-Port': ['15902'], 'Original-Http-Path': ['/osm-readiness-probe/app'] },
      want: { type: 'self', path: '/osm-readiness-probe/app' },
    },
    {
      name: "osm-edge's wrap of our tcpSocket rewrite",
      headers: {
        'Original-Http-Port': ['15904'],
        'Original-Http-Path': ['/osm-healthcheck'],
        'Original-Tcp-Port': ['8080'],
      },
      want: { type: 'tcp', port: 8080 },
    },
  ])('accepts $name', ({ headers, want }) => {
    expect(parseOriginalHeaders(h(headers))).toEqual({ ok: true, target: want });
  });

  it.each([
    { name: 'no header', headers: {}, reason: 'no target port given' },
    {
      name: 'empty',
      headers: { 'Original-Tcp-Port': [''] },
      reason: 'must be a port number 1-65535, got ""',
    },
    { name: 'non-numeric', headers: { 'Original-Tcp-Port': ['http'] }, reason: 'got "http"' },
    { name: 'zero', headers: { 'Original-Tcp-Port': ['0'] }, reason: 'got "0"' },
    { name: '65536', headers: { 'Original-Tcp-Port': ['65536'] }, reason: 'got "65536"' },
    { name: 'trailing junk', headers: { 'Original-Tcp-Port': ['80abc'] }, reason: 'got "80abc"' },
    { name: 'inner space', headers: { 'Original-Tcp-Port': ['8 0'] }, reason: 'got "8 0"' },
    { name: 'negative', headers: { 'Original-Tcp-Port': ['-80'] }, reason: 'got "-80"' },
    { name: 'plus sign', headers: { 'Original-Tcp-Port': ['+80'] }, reason: 'got "+80"' },
    { name: 'leading zero', headers: { 'Original-Tcp-Port': ['080'] }, reason: 'got "080"' },
    {
      name: 'huge',
      headers: { 'Original-Tcp-Port': ['99999999999999999999'] },
      reason: 'got "99999999999999999999"',
    },
    {
      name: 'repeated tcp',
      headers: { 'Original-Tcp-Port': ['80', '81'] },
      reason: 'Original-Tcp-Port is repeated (2 times)',
    },
    {
      name: 'repeated http',
      headers: { 'Original-Http-Port': ['80', '80'] },
      reason: 'Original-Http-Port is repeated',
    },
    {
      name: 'http empty',
      headers: { 'Original-Http-Port': [''] },
      reason: 'Original-Http-Port must be a port number',
    },
    {
      name: 'both kinds',
      headers: { 'Original-Tcp-Port': ['80'], 'Original-Http-Port': ['81'] },
      reason: 'not both',
    },
    {
      name: 'path without port',
      headers: { 'Original-Http-Path': ['/x'] },
      reason: 'Original-Http-Path needs Original-Http-Port',
    },
    {
      name: 'path with tcp',
      headers: { 'Original-Tcp-Port': ['80'], 'Original-Http-Path': ['/x'] },
      reason: 'goes with Original-Http-Port',
    },
    {
      name: 'relative path',
      headers: { 'Original-Http-Port': ['80'], 'Original-Http-Path': ['x'] },
      reason: 'must be an absolute path',
    },
    {
      name: 'absolute URL as path',
      headers: { 'Original-Http-Port': ['80'], 'Original-Http-Path': ['http://evil/'] },
      reason: 'must be an absolute path',
    },
    {
      name: 'our own healthcheck without a target',
      headers: { 'Original-Http-Port': ['15904'], 'Original-Http-Path': ['/osm-healthcheck'] },
      reason: "names this companion's /osm-healthcheck itself",
    },
  ])('refuses $name', ({ headers, reason }) => {
    const parsed = parseOriginalHeaders(h(headers));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });
});
