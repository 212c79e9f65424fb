import type { ValidationErrorItem } from '@rxs/contract';

/** An error that becomes the contract's `{detail}` body with its status. Thrown by services. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string | ValidationErrorItem[],
  ) {
    super(typeof detail === 'string' ? detail : detail.map((d) => d.msg).join('; '));
  }
}

export const notFound = (detail: string) => new HttpError(404, detail);
export const conflict = (detail: string) => new HttpError(409, detail);
export const forbidden = (detail: string) => new HttpError(403, detail);
export const unauthorized = (detail: string) => new HttpError(401, detail);
export const unprocessable = (detail: ValidationErrorItem[]) => new HttpError(422, detail);

export function validationItem(loc: (string | number)[], msg: string, type: string): ValidationErrorItem {
  return { loc, msg, type };
}
