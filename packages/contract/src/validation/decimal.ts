/**
 * Exact decimal arithmetic for the number rules (`decimalDigits`, `increment`), so 0.3 is a
 * multiple of 0.1 as it is for a user (form-js uses big.js for the same reason).
 */

/** `digits / 10^scale`, with no trailing zero in the fraction. */
export interface Decimal {
  digits: bigint;
  scale: number;
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;
/** Beyond this exponent the exact value would be a huge integer: the rules are skipped. */
const MAX_EXPONENT = 400;

/** Parses `12`, `-0.50`, `1e-7`, `1.5E+3`; undefined for anything else. */
export function parseDecimal(text: string): Decimal | undefined {
  const match = DECIMAL.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  if (whole === '' && fraction === '') return undefined;
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
  let digits = BigInt(whole + fraction) * (sign === '-' ? -1n : 1n);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale -= 1;
  }
  return { digits, scale };
}

/** The value's digits at a finer (or equal) `scale`. */
export function atScale(value: Decimal, scale: number): bigint {
  return value.digits * 10n ** BigInt(scale - value.scale);
}

/** Decimal notation: `-1.25`, `3`. */
export function formatDecimal(digits: bigint, scale: number): string {
  const negative = digits < 0n;
  const text = (negative ? -digits : digits).toString().padStart(scale + 1, '0');
  const whole = text.slice(0, text.length - scale);
  const fraction = text.slice(text.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * When `value` is not a multiple of `step` (> 0), the two nearest multiples around it;
 * undefined when it is one.
 */
export function nearestMultiples(value: Decimal, step: Decimal): [string, string] | undefined {
  const scale = Math.max(value.scale, step.scale);
  const v = atScale(value, scale);
  const s = atScale(step, scale);
  let offset = v % s;
  if (offset === 0n) return undefined;
  if (offset < 0n) offset += s;
  const below = v - offset;
  return [formatDecimal(below, scale), formatDecimal(below + s, scale)];
}
