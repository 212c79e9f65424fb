import { HttpError } from '../http/errors.js';

/**
 * The answer, or undefined when it is a 404: for things a page shows when they exist (a revision
 * that is gone, an approval not recorded) without failing the whole page. Other errors stay errors.
 */
export async function unlessMissing<T>(answer: Promise<T>): Promise<T | undefined> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof HttpError && error.statusCode === 404) return undefined;
    throw error;
  }
}
