// The install's pure checks: the configuration as deployed, and the serving certificate against the caBundle,
// its names and its end. Certificates are real ones, made in-process (test/helpers/tls.ts).

import { X509Certificate } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { certificateChecks, configurationChecks, publishedCertChecks } from '../../src/analyze/install.js';
import { SERVING_CERT_ANNOTATION } from '../../src/webhook/tls/published-cert.js';
import { makeTestCert } from '../helpers/tls.js';

const SERVICE = { namespace: 'osm-healthcheck', name: 'osm-healthcheck-webhook' };
const served = makeTestCert('webhook', ['DNS:osm-healthcheck-webhook.osm-healthcheck.svc']);
const other = makeTestCert('other');
afterAll(() => {
  served.cleanup();
  other.cleanup();
});
const validTo = new Date(new X509Certificate(served.cert).validTo);
const daysBeforeEnd = (days: number) => new Date(validTo.getTime() - days * 86_400_000);

describe('certificateChecks', () => {
  it('signed by the caBundle, for the Service, far from its end: ok', () => {
    const checks = certificateChecks(
      served.cert,
      `${other.cert}${served.cert}`,
      SERVICE,
      daysBeforeEnd(30),
      'Secret s/t',
    );
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ['ca-bundle', 'ok'],
      ['certificate-expiry', 'ok'],
    ]);
    expect(checks[0]?.detail).toBe(
      'the caBundle signed the serving certificate in Secret s/t, which is for osm-healthcheck-webhook.osm-healthcheck.svc',
    );
  });

  it.each([
    {
      name: 'a bundle of another CA',
      bundle: other.cert,
      service: SERVICE,
      detail: /did not sign the serving certificate in Secret s\/t/,
    },
    {
      name: 'a certificate for another name',
      bundle: served.cert,
      service: { namespace: 'elsewhere', name: 'hook' },
      detail: /is not for hook\.elsewhere\.svc, the name the API server dials/,
    },
  ])('$name: fail', ({ bundle, service, detail }) => {
    const [check] = certificateChecks(served.cert, bundle, service, daysBeforeEnd(30), 'Secret s/t');
    expect(check).toMatchObject({ name: 'ca-bundle', status: 'fail' });
    expect(check?.detail).toMatch(detail);
  });

  it.each([
    { days: 3, status: 'warn', detail: /expires on .*, in 3 days/ },
    { days: -1, status: 'fail', detail: /expired on/ },
  ])('$days days before its end: $status', ({ days, status, detail }) => {
    const expiry = certificateChecks(served.cert, served.cert, SERVICE, daysBeforeEnd(days), 'Secret s/t')[1];
    expect(expiry).toMatchObject({ name: 'certificate-expiry', status });
    expect(expiry?.detail).toMatch(detail);
  });

  it('no readable certificate in the Secret: fail, naming it', () => {
    expect(certificateChecks('junk', served.cert, SERVICE, daysBeforeEnd(30), 'Secret s/t')).toEqual([
      {
        section: 'install',
        name: 'ca-bundle',
        status: 'fail',
        detail: 'Secret s/t holds no readable certificate',
      },
    ]);
  });
});

describe('publishedCertChecks', () => {
  const config = (annotations?: Record<string, string>) => ({
    metadata: { name: 'osm-healthcheck', ...(annotations === undefined ? {} : { annotations }) },
  });

  it("the certificate the webhook published on its configuration, checked as a Secret's was", () => {
    const checks = publishedCertChecks(
      config({ [SERVING_CERT_ANNOTATION]: served.cert }),
      served.cert,
      SERVICE,
      daysBeforeEnd(3),
      'osm-healthcheck',
    );
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ['ca-bundle', 'ok'],
      ['certificate-expiry', 'warn'],
    ]);
    expect(checks[0]?.detail).toBe(
      `the caBundle signed the serving certificate in the annotation ${SERVING_CERT_ANNOTATION} of osm-healthcheck, which is for osm-healthcheck-webhook.osm-healthcheck.svc`,
    );
    const [wrong] = publishedCertChecks(
      config({ [SERVING_CERT_ANNOTATION]: served.cert }),
      other.cert,
      SERVICE,
      daysBeforeEnd(30),
      'osm-healthcheck',
    );
    expect(wrong).toMatchObject({ name: 'ca-bundle', status: 'fail' });
  });

  it('none published (an older webhook, or one that may not write it): a warning, no expiry line', () => {
    expect(publishedCertChecks(config(), served.cert, SERVICE, daysBeforeEnd(30), 'osm-healthcheck')).toEqual(
      [
        {
          section: 'install',
          name: 'ca-bundle',
          status: 'warn',
          detail: expect.stringMatching(
            new RegExp(
              `^MutatingWebhookConfiguration osm-healthcheck has no annotation ${SERVING_CERT_ANNOTATION}`,
            ),
          ),
        },
      ],
    );
  });
});

describe('configurationChecks', () => {
  const entry = (fields: Record<string, unknown>) => ({ clientConfig: { caBundle: 'Y2E=' }, ...fields });

  it.each([
    {
      name: 'as deploy/webhook sets it',
      fields: { failurePolicy: 'Ignore', timeoutSeconds: 5, reinvocationPolicy: 'IfNeeded' },
      status: 'ok',
      detail: /failurePolicy Ignore, timeoutSeconds 5, reinvocationPolicy IfNeeded$/,
    },
    {
      name: 'failurePolicy Fail',
      fields: { failurePolicy: 'Fail', reinvocationPolicy: 'IfNeeded' },
      status: 'warn',
      detail: /blocks every pod of a labelled namespace/,
    },
    {
      name: 'the defaults of the API',
      fields: {},
      status: 'warn',
      detail: /failurePolicy Fail, timeoutSeconds 10, reinvocationPolicy Never/,
    },
    {
      name: 'a one-second timeout',
      fields: { failurePolicy: 'Ignore', reinvocationPolicy: 'IfNeeded', timeoutSeconds: 1 },
      status: 'warn',
      detail: /slow admissions pass uninjected/,
    },
  ])('$name: $status', ({ fields, status, detail }) => {
    const [check] = configurationChecks(entry(fields), 'osm-healthcheck');
    expect(check).toMatchObject({ name: 'webhook-configuration', status });
    expect(check?.detail).toMatch(detail);
  });

  it('no caBundle: the API server cannot trust the webhook', () => {
    const checks = configurationChecks(
      { failurePolicy: 'Ignore', reinvocationPolicy: 'IfNeeded', clientConfig: {} },
      'osm-healthcheck',
    );
    expect(checks[1]).toMatchObject({ name: 'ca-bundle', status: 'fail' });
    expect(checks[1]?.detail).toMatch(/has no caBundle/);
  });
});
