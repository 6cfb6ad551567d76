// Kubernetes resource quantities: the API server's grammar (k8s.io/apimachinery pkg/api/resource quantity.go,
// ParseQuantity) and the form it stores. A container's resources are rounded up to milli-units on the way in
// (pkg/apis/core/v1/defaults.go SetDefaults_ResourceList, `val.RoundUp(milliScale)`) and written back by
// CanonicalizeBytes, keeping the format the value was written in: decimal SI (`m`, `k`, `M`...), binary SI
// (`Ki`, `Mi`...; a value under 1Ki or not a whole number of bytes goes decimal SI) or a decimal exponent
// (`1e3`). The suffix is the largest that keeps the number whole. Writing this form is what lets the webhook's
// second call (reinvocation) find its own output unchanged.

const DECIMAL: Readonly<Record<string, number>> = { m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Readonly<Record<string, number>> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** A quantity as the API server keeps it: thousandths of a unit (rounded up, away from zero), and its format. */
export interface Quantity {
  milli: bigint;
  format: QuantityFormat;
}

/**
 * Far beyond any node's resources (1E is 10^21 thousandths); quantity.go keeps bigger values in an inf.Dec, but
 * refusing them bounds the work a huge exponent (`1e999999999`) would cost.
 */
const MAX_MILLI = 10n ** 36n;

// <sign>? (<digits> | <digits>. | .<digits> | <digits>.<digits>) then a binary or decimal SI suffix, or e/E with a
// signed whole exponent. `E` alone is exa (decimal SI); `E` followed by digits is an exponent, as in quantity.go.
const GRAMMAR = /^([+-])?(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:([eE])([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[mkMGTPE])?)$/;

/**
 * Parsed quantities by their text: a stream of pods repeats a handful of values (`100m`, `128Mi`), and the fit of
 * our resources reads each pod's several times. Frozen, as they are shared; bounded, so odd input cannot grow it.
 */
const parsedTexts = new Map<string, Readonly<Quantity> | { readonly invalid: string }>();
const PARSED_TEXTS_KEPT = 4096;

/** The quantity, or a string saying what is wrong with the text. */
export function parseQuantity(text: string): Readonly<Quantity> | { readonly invalid: string } {
  let parsed = parsedTexts.get(text);
  if (parsed === undefined) {
    parsed = Object.freeze(parseText(text));
    if (parsedTexts.size >= PARSED_TEXTS_KEPT) parsedTexts.clear();
    parsedTexts.set(text, parsed);
  }
  return parsed;
}

function parseText(text: string): Quantity | { invalid: string } {
  const match = GRAMMAR.exec(text);
  if (match === null) {
    return { invalid: 'must be a Kubernetes quantity, e.g. 100m, 0.5, 64Mi, 1G or 1e3' };
  }
  const [, sign, whole = '', fraction1, fraction2, exponentMark, exponentText, suffix = ''] = match;
  const fraction = fraction1 ?? fraction2 ?? '';
  const digits = BigInt(`${whole}${fraction}` || '0');
  let format: QuantityFormat;
  let multiplier: bigint; // per unit of the digits, times 10^fraction.length, in thousandths
  let divisor = 10n ** BigInt(fraction.length);
  if (exponentMark !== undefined) {
    format = 'DecimalExponent';
    const exponent = Number(exponentText) + 3;
    // Past these, the value is zero, one thousandth rounded up, or beyond MAX_MILLI: no huge BigInt.
    if (digits === 0n) return { milli: 0n, format };
    if (exponent > 36) return { invalid: 'is too large for a quantity' };
    if (exponent < -40) return { milli: sign === '-' ? -1n : 1n, format };
    multiplier = exponent >= 0 ? 10n ** BigInt(exponent) : 1n;
    if (exponent < 0) divisor *= 10n ** BigInt(-exponent);
  } else if (BINARY[suffix] !== undefined) {
    format = 'BinarySI';
    multiplier = 1024n ** BigInt(BINARY[suffix]) * 1000n;
  } else {
    format = 'DecimalSI';
    multiplier = 10n ** BigInt((DECIMAL[suffix] as number) + 3);
  }
  const magnitude = (digits * multiplier + divisor - 1n) / divisor;
  if (magnitude > MAX_MILLI) return { invalid: 'is too large for a quantity' };
  return { milli: sign === '-' ? -magnitude : magnitude, format };
}

/** The text the API server stores for the quantity: `0.1` -> `100m`, `1024Mi` -> `1Gi`, `1000m` -> `1`. */
export function formatQuantity({ milli, format }: Quantity): string {
  if (milli === 0n) return '0';
  const sign = milli < 0n ? '-' : '';
  const magnitude = milli < 0n ? -milli : milli;
  if (format === 'BinarySI' && magnitude >= 1024n * 1000n && magnitude % 1000n === 0n) {
    let bytes = magnitude / 1000n;
    let power = 0;
    while (bytes % 1024n === 0n && power < 6) {
      bytes /= 1024n;
      power += 1;
    }
    const name = Object.keys(BINARY).find((key) => BINARY[key] === power) ?? '';
    return `${sign}${bytes}${name}`;
  }
  // AsCanonicalBytes: the mantissa with every factor of 10 taken out, the exponent brought down to a multiple of 3.
  let value = magnitude;
  let exponent = -3;
  while (value % 1000n === 0n && (format === 'DecimalExponent' || exponent < 18)) {
    value /= 1000n;
    exponent += 3;
  }
  if (format === 'DecimalExponent') return `${sign}${value}${exponent === 0 ? '' : `e${exponent}`}`;
  const name = Object.keys(DECIMAL).find((key) => DECIMAL[key] === exponent) ?? '';
  return `${sign}${value}${name}`;
}

/** `text` in the API server's stored form; throws on text that is no quantity (test stand-ins use this). */
export function canonicalQuantity(text: string): string {
  const parsed = parseQuantity(text);
  if ('invalid' in parsed) throw new Error(`${JSON.stringify(text)} ${parsed.invalid}`);
  return formatQuantity(parsed);
}
