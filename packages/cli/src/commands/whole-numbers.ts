import { UserError } from '../errors.js';

/** A flag's whole number, at least `min`; undefined when the flag is not given. */
export function positiveInteger(value: string | undefined, flag: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min)
    throw new UserError(`${flag} takes a whole number of at least ${min}, not "${value}".`);
  return number;
}
