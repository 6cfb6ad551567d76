// A resource quantity as the API server stores it: rounded up to milli-units (defaults.go SetDefaults_ResourceList,
// `val.RoundUp(milliScale)`) and written back in canonical form (k8s.io/apimachinery pkg/api/resource
// quantity.go CanonicalizeBytes: the largest suffix that keeps the number whole; a binary quantity under 1Ki or
// not a whole number of bytes goes decimal). Enough of it for the quantities a pod spec carries; exponent forms
// throw, so a test meeting one says so instead of guessing.

const DECIMAL: Record<string, number> = { m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };

/** `0.01` -> `10m`, `1000m` -> `1`, `2000` -> `2k`, `1024Mi` -> `1Gi`, `1.5Ki` -> `1536`. */
export function canonicalQuantity(text: string): string {
  const match = /^(\d+)(?:\.(\d+))?([a-zA-Z]*)$/.exec(text);
  const suffix = match?.[3] ?? '';
  if (match === null || (DECIMAL[suffix] === undefined && BINARY[suffix] === undefined)) {
    throw new Error(`quantity stand-in: cannot read ${JSON.stringify(text)}`);
  }
  const whole = match[1] as string;
  const fraction = match[2] ?? '';
  // The value in thousandths of a unit, rounded up: digits / 10^fraction.length * unit * 1000.
  const digits = BigInt(whole + fraction);
  const scale = 10n ** BigInt(fraction.length);
  const binary = BINARY[suffix];
  const perUnit =
    binary === undefined ? 10n ** BigInt((DECIMAL[suffix] as number) + 3) : 1024n ** BigInt(binary) * 1000n;
  const rounded = (digits * perUnit + scale - 1n) / scale;
  if (binary !== undefined && rounded % 1000n === 0n && rounded >= 1024n * 1000n) {
    let bytes = rounded / 1000n;
    let power = 0;
    while (bytes % 1024n === 0n && power < 6) {
      bytes /= 1024n;
      power += 1;
    }
    const name = Object.keys(BINARY).find((key) => BINARY[key] === power);
    if (name !== undefined) return `${bytes}${name}`;
  }
  return decimal(rounded);
}

/** Thousandths -> the largest decimal suffix that keeps the number whole. */
function decimal(milli: bigint): string {
  if (milli === 0n) return '0';
  let value = milli;
  let exponent = -3;
  while (value % 1000n === 0n && exponent < 18) {
    value /= 1000n;
    exponent += 3;
  }
  const name = Object.keys(DECIMAL).find((key) => DECIMAL[key] === exponent) ?? '';
  return `${value}${name}`;
}
