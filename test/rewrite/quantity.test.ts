// The API server's quantity grammar and the form it stores (k8s.io/apimachinery pkg/api/resource quantity.go;
// rounded up to milli-units first, defaults.go SetDefaults_ResourceList). Expected values are what
// `kubectl get pod -o yaml` shows for a container created with the input.

import { describe, expect, it } from 'vitest';
import { canonicalQuantity, parseQuantity } from '../../src/kube/quantity.js';

describe('canonicalQuantity', () => {
  it.each([
    ['100m', '100m'],
    ['0.1', '100m'],
    ['.1', '100m'],
    ['0.01', '10m'],
    ['1000m', '1'],
    ['1.', '1'],
    ['+2', '2'],
    ['-1', '-1'],
    ['1500m', '1500m'],
    ['2000', '2k'],
    ['0', '0'],
    ['0Mi', '0'],
    ['0.0001', '1m'], // rounded up to a milli-unit
    ['50m', '50m'],
    ['64Mi', '64Mi'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1.5Gi', '1536Mi'],
    ['1.5Ki', '1536'],
    ['1Ki', '1Ki'],
    ['0.5Ki', '512'], // under 1Ki: decimal
    ['1023', '1023'],
    ['0.5Mi', '512Ki'],
    ['0.1Mi', '104857600m'], // 104857.6 bytes: not whole bytes, so decimal, in milli-units as kubectl shows it
    ['1G', '1G'],
    ['1000M', '1G'],
    ['1E', '1E'],
    ['1000P', '1E'],
    ['1e3', '1e3'],
    ['1E3', '1e3'],
    ['1000e0', '1e3'],
    ['1.5e3', '1500'],
    ['1e-1', '100e-3'],
    ['32e6', '32e6'],
    ['1e0', '1'],
  ])('%s -> %s', (text, canonical) => {
    expect(canonicalQuantity(text)).toBe(canonical);
  });

  it.each([
    '',
    ' 1',
    '1 ',
    'abc',
    '1mi',
    '1MB',
    '1Kib',
    '1.2.3',
    '.',
    '1e',
    '1e1.5',
    'Mi',
    '--1',
    '1m1',
    '0x10',
  ])('refuses %j', (text) => {
    const parsed = parseQuantity(text);
    expect(parsed).toEqual({ invalid: expect.stringMatching(/^must be a Kubernetes quantity/) });
    expect(() => canonicalQuantity(text)).toThrow(/must be a Kubernetes quantity/);
  });

  it('refuses a value beyond 10^33 units, even with a huge exponent, in bounded time', () => {
    expect(parseQuantity('1e999999999')).toEqual({ invalid: 'is too large for a quantity' });
    expect(parseQuantity('1e34')).toEqual({ invalid: 'is too large for a quantity' });
    expect(canonicalQuantity('10E')).toBe('10E');
    expect(canonicalQuantity('1e-999999999')).toBe('1e-3');
    expect(canonicalQuantity('0e999999999')).toBe('0');
  });

  it('keeps the format it was written in', () => {
    expect(parseQuantity('1Gi')).toEqual({ milli: 1024n ** 3n * 1000n, format: 'BinarySI' });
    expect(parseQuantity('1G')).toEqual({ milli: 10n ** 12n, format: 'DecimalSI' });
    expect(parseQuantity('1e9')).toEqual({ milli: 10n ** 12n, format: 'DecimalExponent' });
  });
});
