import type { ErrorObject } from 'ajv';
import type { ValidationErrorItem } from '@rxs/contract';
import { toValidationItems } from '../../http/validation.js';
import { itemProblems } from './bulk-items.js';
import { unprocessable } from '../../http/errors.js';

/**
 * The shape checks of `POST /records/bulk`. The route's schema (a list of creates or updates)
 * documents the body, but a union's errors say only that an item matches neither shape: each item
 * is checked again against the one shape it is (an update when it has `_id`), with the validator
 * the single writes' bodies get, so an item's problems are its single write's, under its index.
 */

/** A compiled body validator, as Fastify's `compileValidationSchema` gives it. */
type Validate = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The problems of the body as a whole (not an object of `records`, too many items), if any. */
export function bulkEnvelopeProblems(error: { validation?: unknown }): ValidationErrorItem[] {
  const errors = (error.validation ?? []) as ErrorObject[];
  const envelope = errors.filter((e) => e.instancePath === '' || e.instancePath === '/records');
  return toValidationItems(envelope, 'body');
}

/** Checks an item against its shape: its problems, named under its index. */
export function bulkItemShapes(
  create: Validate,
  update: Validate,
): (item: unknown, index: number) => ValidationErrorItem[] {
  return (item, index) => {
    const validate = item !== null && typeof item === 'object' && '_id' in item ? update : create;
    if (validate(item)) return [];
    return itemProblems(index, unprocessable(toValidationItems(validate.errors ?? [], 'body')));
  };
}
