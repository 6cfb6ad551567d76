// The HTTP prober's pure rules, without a network: kubelet's request (request.go), Go's redirect loop with
// kubelet's RedirectChecker, the verdict, and the message shapes.

import { describe, expect, it } from 'vitest';
import {
  answered,
  atHop,
  describeError,
  failed,
  kubeletWarning,
  timeoutReason,
  verdictFor,
} from '../../src/probe/http-outcome.js';
import {
  canonicalHeaderKey,
  firstHop,
  type Hop,
  h1Headers,
  h2Headers,
  hostnameOf,
  locationHost,
  nextStep,
  redirectBodyBytes,
} from '../../src/probe/http-request.js';
import type { HttpHeader } from '../../src/table/types.js';

const UA = 'kube-probe/1.30';

function hop(
  path = '/live',
  httpHeaders: HttpHeader[] = [],
  scheme: 'HTTP' | 'HTTPS' = 'HTTP',
  host = '10.1.2.3',
): Hop {
  return firstHop({ scheme, port: 8080, path, httpHeaders }, host, UA);
}

function headers(...pairs: [string, string][]): HttpHeader[] {
  return pairs.map(([name, value]) => ({ name, value }));
}

describe('canonicalHeaderKey (Go textproto)', () => {
  it.each([
    { name: 'lower case', given: 'x-probe', want: 'X-Probe' },
    { name: 'upper case', given: 'HOST', want: 'Host' },
    { name: 'mixed', given: 'FOO-bAR', want: 'Foo-Bar' },
    { name: 'www-authenticate', given: 'www-authenticate', want: 'Www-Authenticate' },
    { name: 'underscore is not a separator', given: 'x_custom_id', want: 'X_custom_id' },
    { name: 'digits', given: 'x-1a', want: 'X-1a' },
    { name: 'double dash', given: 'a--b', want: 'A--B' },
    { name: 'not a token: left alone', given: 'bad name', want: 'bad name' },
  ])('$name', ({ given, want }) => expect(canonicalHeaderKey(given)).toBe(want));
});

describe('firstHop (request.go newProbeRequest + Go transport)', () => {
  it.each([
    { name: 'http', scheme: 'HTTP', host: '10.1.2.3', path: '/live', href: 'http://10.1.2.3:8080/live' },
    { name: 'https', scheme: 'HTTPS', host: '10.1.2.3', path: '/live', href: 'https://10.1.2.3:8080/live' },
    {
      name: 'query kept',
      scheme: 'HTTP',
      host: '10.1.2.3',
      path: '/r?a=1&b',
      href: 'http://10.1.2.3:8080/r?a=1&b',
    },
    { name: 'IPv6 bracketed', scheme: 'HTTP', host: 'fd00::1', path: '/', href: 'http://[fd00::1]:8080/' },
    {
      name: 'relative path under /',
      scheme: 'HTTP',
      host: '10.1.2.3',
      path: 'x',
      href: 'http://10.1.2.3:8080/x',
    },
  ] as const)('URL: $name', ({ scheme, host, path, href }) => {
    const first = hop(path, [], scheme, host);
    expect(first.href).toBe(href);
    expect(first.urlHost).toBe(host.includes(':') ? `[${host}]:8080` : `${host}:8080`);
  });

  it.each([
    {
      name: 'no table headers: User-Agent, Accept, Connection',
      given: headers(),
      want: { 'User-Agent': [UA], Accept: ['*/*'], Connection: ['close'] },
    },
    {
      name: 'custom header canonicalised and added',
      given: headers(['x-probe', '1']),
      want: { 'User-Agent': [UA], Accept: ['*/*'], 'X-Probe': ['1'], Connection: ['close'] },
    },
    {
      name: 'User-Agent replaced',
      given: headers(['user-agent', 'foo/1.0']),
      want: { 'User-Agent': ['foo/1.0'], Accept: ['*/*'], Connection: ['close'] },
    },
    {
      name: 'empty User-Agent sends none',
      given: headers(['User-Agent', '']),
      want: { Accept: ['*/*'], Connection: ['close'] },
    },
    {
      name: 'only the first User-Agent is sent',
      given: headers(['User-Agent', 'a/1'], ['User-Agent', 'b/2']),
      want: { 'User-Agent': ['a/1'], Accept: ['*/*'], Connection: ['close'] },
    },
    {
      name: 'Accept replaced',
      given: headers(['Accept', 'text/html']),
      want: { 'User-Agent': [UA], Accept: ['text/html'], Connection: ['close'] },
    },
    {
      name: 'empty Accept sends none',
      given: headers(['ACCEPT', '']),
      want: { 'User-Agent': [UA], Connection: ['close'] },
    },
    {
      name: 'empty Accept-Encoding is kept as given',
      given: headers(['Accept-Encoding', '']),
      want: { 'User-Agent': [UA], Accept: ['*/*'], 'Accept-Encoding': [''], Connection: ['close'] },
    },
    {
      name: 'framing headers are never copied',
      given: headers(['Content-Length', '5'], ['Transfer-Encoding', 'chunked'], ['Trailer', 'x']),
      want: { 'User-Agent': [UA], Accept: ['*/*'], Connection: ['close'] },
    },
    {
      name: 'Connection keep-alive gets close beside it',
      given: headers(['Connection', 'keep-alive']),
      want: { 'User-Agent': [UA], Accept: ['*/*'], Connection: ['keep-alive', 'close'] },
    },
    {
      name: 'Connection that says close is kept alone',
      given: headers(['connection', 'Upgrade, Close']),
      want: { 'User-Agent': [UA], Accept: ['*/*'], Connection: ['Upgrade, Close'] },
    },
    {
      name: 'Host goes to req.Host, not the header list',
      given: headers(['host', 'muffins.cupcakes.org']),
      want: { 'User-Agent': [UA], Accept: ['*/*'], Connection: ['close'] },
    },
  ])('headers: $name', ({ given, want }) => {
    expect(hop('/live', given).headers).toEqual(want);
  });

  it('sends Host first over HTTP/1.1: the override, else host:port', () => {
    expect(Object.keys(h1Headers(hop()))[0]).toBe('Host');
    expect(h1Headers(hop()).Host).toEqual(['10.1.2.3:8080']);
    expect(h1Headers(hop('/', headers(['Host', 'app.example']))).Host).toEqual(['app.example']);
  });

  it('maps to HTTP/2: pseudo-headers, lower-case names, no connection-specific fields', () => {
    const given = headers(
      ['Host', 'app.example'],
      ['X-A', '1'],
      ['x-a', '2'],
      ['Keep-Alive', '5'],
      ['TE', 'gzip'],
    );
    expect(h2Headers(hop('/live?q=1', given, 'HTTPS'))).toEqual({
      ':method': 'GET',
      ':scheme': 'https',
      ':authority': 'app.example',
      ':path': '/live?q=1',
      'user-agent': UA,
      accept: '*/*',
      'x-a': ['1', '2'],
    });
  });
});

describe('locationHost and hostnameOf (Go url.Parse, URL.Hostname)', () => {
  it.each([
    { name: 'absolute path', location: '/x', host: undefined },
    { name: 'relative path', location: 'x/y', host: undefined },
    { name: 'query only', location: '?q=1', host: undefined },
    { name: 'triple slash without scheme is a path', location: '///x', host: undefined },
    { name: 'absolute URL', location: 'http://10.1.2.3:81/x', host: '10.1.2.3:81' },
    { name: 'scheme-relative', location: '//other:1/x', host: 'other:1' },
    { name: 'userinfo dropped', location: 'http://u:p@10.1.2.3/x', host: '10.1.2.3' },
    { name: 'query right after host', location: 'http://h?x', host: 'h' },
    { name: 'scheme without authority', location: 'http:/x', host: '' },
    { name: 'scheme with empty authority', location: 'http:///x', host: '' },
    { name: 'IPv6', location: 'https://[fd00::1]:443/', host: '[fd00::1]:443' },
  ])('$name', ({ location, host }) => expect(locationHost(location)).toBe(host));

  it.each([
    { given: '10.1.2.3:80', want: '10.1.2.3' },
    { given: '[fd00::1]:80', want: 'fd00::1' },
    { given: '[fd00::1]', want: 'fd00::1' },
    { given: 'example.com', want: 'example.com' },
    { given: 'example.com:', want: 'example.com' },
  ])('hostname of $given is $want', ({ given, want }) => expect(hostnameOf(given)).toBe(want));
});

describe('nextStep (Go Client.Do + kubelet RedirectChecker)', () => {
  const first = hop('/a');

  it.each([
    { name: '200 is final', status: 200, location: undefined, want: { kind: 'final' } },
    { name: '300 is never followed', status: 300, location: '/b', want: { kind: 'final' } },
    { name: '304 is never followed', status: 304, location: '/b', want: { kind: 'final' } },
    { name: '305 is never followed', status: 305, location: '/b', want: { kind: 'final' } },
    {
      name: '302 without Location',
      status: 302,
      location: undefined,
      want: { kind: 'final', note: 'no Location to follow' },
    },
    {
      name: '302 with empty Location',
      status: 302,
      location: '',
      want: { kind: 'final', note: 'no Location to follow' },
    },
    {
      name: 'another hostname',
      status: 302,
      location: 'http://0.0.0.0/fail',
      want: { kind: 'final', note: 'redirect to http://0.0.0.0/fail not followed: other host' },
    },
    {
      name: 'localhost is another hostname',
      status: 301,
      location: 'http://localhost:8080/a',
      want: { kind: 'final', note: 'redirect to http://localhost:8080/a not followed: other host' },
    },
    {
      name: 'scheme without authority has no hostname (Go)',
      status: 302,
      location: 'http:/b',
      want: { kind: 'final', note: 'redirect to http://10.1.2.3:8080/b not followed: other host' },
    },
    {
      name: 'a backslash WHATWG reads as another host is not dialled',
      status: 302,
      location: '/\\evil.example/x',
      want: { kind: 'final', note: 'redirect to http://evil.example/x not followed: other host' },
    },
    {
      name: 'unsupported scheme on the same host',
      status: 302,
      location: 'ftp://10.1.2.3/x',
      want: { kind: 'fail', reason: 'unsupported protocol scheme "ftp"' },
    },
    {
      name: 'unparsable Location',
      status: 302,
      location: 'http://[::1/x',
      want: { kind: 'fail', reason: 'failed to parse Location header "http://[::1/x"' },
    },
  ])('$name', ({ status, location, want }) => {
    expect(nextStep(first, first, status, location, 0)).toEqual(want);
  });

  it.each([
    { name: '301 relative', status: 301, location: '/b', href: 'http://10.1.2.3:8080/b' },
    {
      name: '302 relative to the current path',
      status: 302,
      location: 'b?x=1',
      href: 'http://10.1.2.3:8080/b?x=1',
    },
    { name: '303', status: 303, location: '/b', href: 'http://10.1.2.3:8080/b' },
    { name: '307 other port', status: 307, location: 'http://10.1.2.3:9/b', href: 'http://10.1.2.3:9/b' },
    { name: '308 to https', status: 308, location: 'https://10.1.2.3:8443/', href: 'https://10.1.2.3:8443/' },
  ])('follows $name', ({ status, location, href }) => {
    const step = nextStep(first, first, status, location, 0);
    expect(step.kind === 'follow' && step.hop.href).toBe(href);
  });

  it.each([
    { name: '9th redirect is followed', followed: 8, want: 'follow' },
    { name: '10th redirect fails', followed: 9, want: 'fail' },
  ])('$name', ({ followed, want }) => {
    const step = nextStep(first, first, 302, '/b', followed);
    expect(step.kind).toBe(want);
    if (step.kind === 'fail')
      expect(step.reason).toBe('stopped after 10 redirects (last: http://10.1.2.3:8080/b)');
  });

  it('judges the hostname before counting: a 10th redirect elsewhere is a Warning', () => {
    expect(nextStep(first, first, 302, 'http://other/', 9)).toMatchObject({ kind: 'final' });
  });

  it.each([
    { name: 'relative Location keeps it', location: '/b', want: 'app.example' },
    { name: 'scheme-relative Location keeps it', location: '//10.1.2.3:8080/b', want: 'app.example' },
    { name: 'absolute Location drops it', location: 'http://10.1.2.3:8080/b', want: '10.1.2.3:8080' },
  ])('Host override: $name', ({ location, want }) => {
    const withHost = hop('/a', headers(['Host', 'app.example']));
    const step = nextStep(withHost, withHost, 302, location, 0);
    expect(step.kind === 'follow' && h1Headers(step.hop).Host).toEqual([want]);
  });

  it.each([
    {
      name: 'previous URL',
      from: hop('/a?q=1'),
      location: '/b',
      given: [],
      want: ['http://10.1.2.3:8080/a?q=1'],
    },
    {
      name: 'none from https to http',
      from: hop('/a', [], 'HTTPS'),
      location: 'http://10.1.2.3:80/',
      given: [],
      want: undefined,
    },
    {
      name: "the table's own",
      from: undefined,
      location: '/b',
      given: headers(['Referer', 'r']),
      want: ['r'],
    },
  ])('Referer: $name', ({ from, location, given, want }) => {
    const start = from ?? hop('/a', given);
    const step = nextStep(start, start, 302, location, 0);
    expect(step.kind === 'follow' && step.hop.headers.Referer).toEqual(want);
  });

  it.each([
    { contentLength: undefined, want: 2048 },
    { contentLength: '0', want: 2048 },
    { contentLength: '2048', want: 2048 },
    { contentLength: '2049', want: 0 },
  ])(
    'drains $want bytes of a redirect body with Content-Length $contentLength',
    ({ contentLength, want }) => {
      expect(redirectBodyBytes(contentLength)).toBe(want);
    },
  );
});

describe('verdict and message', () => {
  it.each([
    { status: 100, verdict: 'failure', answered: 503 },
    { status: 199, verdict: 'failure', answered: 503 },
    { status: 200, verdict: 'success', answered: 200 },
    { status: 299, verdict: 'success', answered: 299 },
    { status: 300, verdict: 'warning', answered: 300 },
    { status: 399, verdict: 'warning', answered: 399 },
    { status: 400, verdict: 'failure', answered: 400 },
    { status: 599, verdict: 'failure', answered: 599 },
  ])('$status -> $verdict $answered', ({ status, verdict, answered: want }) => {
    expect(verdictFor(status)).toEqual({ verdict, status: want });
  });

  const first = hop('/live');
  const later = hop('/new');
  const NO_BODY = { bytes: Buffer.alloc(0), contentType: undefined };
  const FOUND = {
    bytes: Buffer.from('<a href="http://other.example/">Found</a>.\n\n'),
    contentType: 'text/html',
  };

  it.each([
    {
      name: 'answered',
      result: answered(first, first, 0, 200, 3, undefined, NO_BODY),
      want: { verdict: 'success', status: 200, message: 'GET http://10.1.2.3:8080/live -> 200 in 3 ms' },
    },
    {
      name: 'answered after redirects',
      result: answered(first, later, 2, 500, 4, undefined, NO_BODY),
      message:
        'GET http://10.1.2.3:8080/live -> 500 (after 2 redirects, at http://10.1.2.3:8080/new) in 4 ms',
      want: { verdict: 'failure', status: 500, reason: 'status' },
    },
    {
      name: 'redirect not followed',
      result: answered(
        first,
        first,
        0,
        302,
        2,
        'redirect to http://other.example/ not followed: other host',
        FOUND,
      ),
      want: {
        verdict: 'warning',
        status: 302,
        appBody: FOUND,
        message:
          'GET http://10.1.2.3:8080/live -> 302 (redirect to http://other.example/ not followed: other host) in 2 ms',
      },
    },
    {
      name: 'transport failure',
      result: failed(first, 'connect ECONNREFUSED 10.1.2.3:8080', 'refused', 1),
      want: {
        verdict: 'failure',
        reason: 'refused',
        status: 503,
        message: 'GET http://10.1.2.3:8080/live failed: connect ECONNREFUSED 10.1.2.3:8080 after 1 ms',
      },
    },
    {
      name: 'timeout on a later hop',
      result: failed(first, atHop(timeoutReason(900, 'body'), later, 1), 'timeout'),
      want: {
        reason: 'timeout',
        status: 503,
        message:
          'GET http://10.1.2.3:8080/live failed: timeout after 900 ms waiting for body (at http://10.1.2.3:8080/new, after 1 redirect)',
      },
    },
  ])('$name', ({ result, want, message }) => {
    expect(result).toMatchObject(want);
    if (message !== undefined) expect(result.message).toBe(message);
  });

  it.each([
    { name: '200', status: 200 },
    { name: '500', status: 500 },
  ])('only a Warning carries the body: $name', ({ status }) => {
    expect(answered(first, first, 0, status, 1, undefined, FOUND)).not.toHaveProperty('appBody');
  });

  // Kubernetes' http_test.go: redirectHandlerWithBody(308, "") and (308, "ok body").
  it.each([
    { name: 'empty body', body: Buffer.alloc(0), want: 'Probe terminated redirects, Response body: ' },
    {
      name: 'ok body',
      body: Buffer.from('ok body'),
      want: 'Probe terminated redirects, Response body: ok body',
    },
    {
      name: "Go's http.Redirect body, newlines kept",
      body: Buffer.from('<a href="http://0.0.0.0/">Found</a>.\n\n'),
      want: 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n\n',
    },
  ])("kubelet's Warning text: $name", ({ body, want }) => {
    expect(kubeletWarning(body)).toBe(want);
  });

  it.each([
    {
      name: 'node errno error',
      err: new Error('connect ECONNREFUSED 10.1.2.3:8080'),
      want: 'connect ECONNREFUSED 10.1.2.3:8080',
    },
    {
      name: 'OpenSSL error',
      err: Object.assign(new Error('C0:error:0A00010B:SSL routines'), {
        code: 'ERR_SSL_WRONG_VERSION_NUMBER',
        reason: 'wrong version number',
      }),
      want: 'TLS error: wrong version number (is the port plain HTTP?)',
    },
    {
      name: 'llhttp parse error',
      err: Object.assign(new Error('Parse Error: Expected HTTP/'), {
        code: 'HPE_INVALID_CONSTANT',
        reason: 'Expected HTTP/',
      }),
      want: 'invalid HTTP response (Expected HTTP/)',
    },
    { name: 'not an Error', err: 'boom', want: 'boom' },
  ])('describes $name', ({ err, want }) => expect(describeError(err)).toBe(want));
});
