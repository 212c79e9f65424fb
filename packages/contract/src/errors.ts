import { Type, type Static } from '@sinclair/typebox';

/** One problem of a 422 answer: where (`loc`, e.g. ["body", "data", "priority"]), what, and its kind. */
export const ValidationErrorItem = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String(),
});
export type ValidationErrorItem = Static<typeof ValidationErrorItem>;

/** 422 body: `detail` is an array of problems. */
export const ValidationErrorBody = Type.Object({ detail: Type.Array(ValidationErrorItem) });
export type ValidationErrorBody = Static<typeof ValidationErrorBody>;

/** Every other error body (401, 403, 404, 409, 413, ...): `detail` is a sentence. */
export const ErrorBody = Type.Object({ detail: Type.String() });
export type ErrorBody = Static<typeof ErrorBody>;
