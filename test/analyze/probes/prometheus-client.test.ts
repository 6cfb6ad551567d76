// The Prometheus client against a real HTTPS server on loopback that asks for what a user's Prometheus behind a
// proxy asks for (a bearer token, or basic auth) and answers as Prometheus' HTTP API does: each auth reaches it,
// the CA file is trusted, and each failure names the URL and what went wrong.

import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prometheus } from '../../../src/analyze/probes/prometheus-client.js';
import { makeTestCert, type TestCert } from '../../helpers/tls.js';

describe('prometheus client', () => {
  let cert: TestCert;
  let server: Server;
  let url: string;
  const seen: { path: string; authorization: string | undefined }[] = [];
  const tokenFile = () => join(cert.certFile, '..', 'token');
  const passwordFile = () => join(cert.certFile, '..', 'password');

  beforeAll(async () => {
    cert = makeTestCert();
    writeFileSync(tokenFile(), 'sekret\n');
    writeFileSync(passwordFile(), 'pw\n');
    server = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      const ok = ['Bearer sekret', `Basic ${Buffer.from('me:pw').toString('base64')}`];
      if (!ok.includes(req.headers.authorization ?? '')) {
        res.writeHead(401).end('Unauthorized');
        return;
      }
      const data = req.url?.startsWith('/prom/api/v1/query_range')
        ? {
            resultType: 'matrix',
            result: [
              {
                metric: { pod: 'a' },
                values: [
                  [60, '1'],
                  [120, '2'],
                ],
              },
            ],
          }
        : { resultType: 'vector', result: [{ metric: { pod: 'a' }, value: [120, '0.78'] }] };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'success', data }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as { port: number }).port}/prom`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    cert.cleanup();
  });

  it("asks with a bearer token, trusting the CA file, under the URL's path", async () => {
    const prom = prometheus({ url, bearerTokenFile: tokenFile(), caFile: cert.certFile, timeoutMs: 5000 });
    expect(await prom.instant('up', 120)).toEqual([{ metric: { pod: 'a' }, values: [[120, 0.78]] }]);
    expect(await prom.range('up', 60, 120, 60)).toEqual([
      {
        metric: { pod: 'a' },
        values: [
          [60, 1],
          [120, 2],
        ],
      },
    ]);
    expect(seen.at(-2)?.path).toBe('/prom/api/v1/query?query=up&time=120');
    expect(seen.at(-1)?.authorization).toBe('Bearer sekret');
  });

  it('asks with basic auth', async () => {
    const basicAuth = { user: 'me', passwordFile: passwordFile() };
    const prom = prometheus({ url, basicAuth, caFile: cert.certFile, timeoutMs: 5000 });
    expect(await prom.instant('up', 1)).toHaveLength(1);
  });

  it.each([
    {
      name: 'refused credentials',
      options: {},
      error: /^--prometheus https:\/\/127\.0\.0\.1:\d+\/prom: HTTP 401, and no JSON: is it Prometheus\?$/,
    },
    {
      name: 'a certificate it cannot trust',
      options: { caFile: undefined },
      error: /self-signed certificate|unable to verify/,
    },
  ])('says what went wrong: $name', async ({ options, error }) => {
    const prom = prometheus({ url, caFile: cert.certFile, timeoutMs: 5000, ...options });
    const failed = prom.instant('up', 1);
    await expect(failed).rejects.toMatchObject({ code: 'OSM_HC_PROMETHEUS' });
    await expect(failed).rejects.toThrow(error);
  });

  it('refuses a URL it cannot ask and a token file it cannot read, as usage errors', () => {
    expect(() => prometheus({ url: 'ftp://x', timeoutMs: 1 })).toThrow(
      '--prometheus "ftp://x" is not accepted (an http:// or https:// URL)',
    );
    expect(() => prometheus({ url, bearerTokenFile: '/nonexistent/token', timeoutMs: 1 })).toThrow(
      /--prometheus-token-file \/nonexistent\/token: ENOENT/,
    );
  });
});
