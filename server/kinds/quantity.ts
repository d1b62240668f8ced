/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `2e3`), read as plain numbers: enough to tell a
 * negative quantity and to compare a request with its limit. Precision beyond a double is not
 * needed for those two checks.
 */

/** Decimal suffixes as powers of ten; binary ones as powers of two. */
const DECIMAL_EXPONENTS: Record<string, number> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_EXPONENTS: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The value of a quantity given as a JSON string or number; undefined when it is not one. */
export function quantityValue(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  // An integer past 2^53 arrives as a bigint (server/log/json.ts); a quantity compares as a double.
  if (typeof raw === 'bigint') return Number(raw);
  if (typeof raw !== 'string') return undefined;
  const match = QUANTITY.exec(raw.trim());
  if (!match) return undefined;
  const mantissa = match[1]!;
  // Scaling through the decimal exponent keeps `10u` exactly 1e-5.
  if (match[2] !== undefined) return Number(`${mantissa}e${Number(match[2].slice(1))}`);
  const suffix = match[3] ?? '';
  const binary = BINARY_EXPONENTS[suffix];
  if (binary !== undefined) return Number(mantissa) * 2 ** binary;
  return Number(`${mantissa}e${DECIMAL_EXPONENTS[suffix]!}`);
}
