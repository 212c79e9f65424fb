import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { HttpError, validationItem } from './errors.js';

/** Deepest nesting a request body may have; form schemas need far less. */
export const MAX_JSON_DEPTH = 64;

/**
 * Parses JSON bodies with the checks Fastify's default parser lacks: nesting depth (later code that
 * recurses must not overflow the stack) and `__proto__` keys anywhere (they must never reach an
 * object merge). Every failure is the contract's 422 with a `detail` array.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  // JSON only: without Fastify's text parser, a text/plain body is the contract's 415.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(\s*;.*)?$/i,
    { parseAs: 'buffer' },
    (_req, body, done) => {
      const bytes = body as Buffer;
      // Decoding would silently turn invalid bytes into U+FFFD and store data nobody sent.
      if (!isUtf8(bytes)) {
        done(
          new HttpError(422, [
            validationItem(
              ['body'],
              'The request body is not valid UTF-8: send JSON encoded as UTF-8.',
              'json_invalid_utf8',
            ),
          ]),
        );
        return;
      }
      const text = bytes.toString('utf8');
      if (text.trim() === '') {
        done(null, undefined);
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        done(
          new HttpError(422, [
            validationItem(
              ['body'],
              `The request body is not valid JSON: ${(error as Error).message}`,
              'json_invalid',
            ),
          ]),
        );
        return;
      }
      const problem = findHostileStructure(value);
      done(problem ? new HttpError(422, [problem]) : null, value);
    },
  );
}

const NUL = '\u0000';
/** Half of a UTF-16 surrogate pair without its other half: not text, and not storable as sent. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A text that may hold NUL or a lone surrogate: one quick search, the exact checks only then. */
const SUSPECT = /[\u0000\uD800-\uDFFF]/;

/** A value of the body still to walk, with the key that leads to it from its parent. */
interface Pending {
  value: unknown;
  depth: number;
  parent: Pending | undefined;
  key: string | number | undefined;
}

/**
 * Walks the parsed value without recursion; reports excessive depth, a `__proto__` key, a NUL
 * character (PostgreSQL's jsonb cannot store it, so both engines refuse it alike), or a lone
 * surrogate (the database would store it altered, so it would not read back as acknowledged).
 * A location is made only for a problem (a body of thousands of values has none).
 */
function findHostileStructure(root: unknown) {
  const stack: Pending[] = [{ value: root, depth: 0, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const pending = stack.pop()!;
    const { value, depth } = pending;
    if (typeof value === 'string') {
      if (!SUSPECT.test(value)) continue;
      if (value.includes(NUL))
        return validationItem(locOf(pending), 'Text may not contain NUL (\\u0000) characters.', 'string_nul');
      if (LONE_SURROGATE.test(value)) return loneSurrogate(locOf(pending));
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      return validationItem(
        locOf(pending),
        `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
        'json_too_deep',
      );
    }
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++)
        stack.push({ value: value[index], depth: depth + 1, parent: pending, key: index });
      continue;
    }
    for (const key of Object.keys(value)) {
      if (SUSPECT.test(key)) {
        if (key.includes(NUL))
          return validationItem(
            locOf(pending),
            'Keys may not contain NUL (\\u0000) characters.',
            'string_nul',
          );
        if (LONE_SURROGATE.test(key)) return loneSurrogate([...locOf(pending), key]);
      }
      if (key === '__proto__') {
        return validationItem(
          [...locOf(pending), key],
          'The key "__proto__" is not allowed in request bodies.',
          'key_forbidden',
        );
      }
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: pending, key });
    }
  }
  return undefined;
}

/**
 * Where a value is: `body`, then the keys leading to it; past eight steps, the first eight and the
 * value's own key (a deep body's location stays short).
 */
function locOf(pending: Pending): (string | number)[] {
  const keys: (string | number)[] = [];
  for (let at: Pending | undefined = pending; at?.key !== undefined; at = at.parent) keys.push(at.key);
  const loc: (string | number)[] = ['body', ...keys.reverse()];
  return loc.length <= 9 ? loc : [...loc.slice(0, 8), loc[loc.length - 1]!];
}

function loneSurrogate(loc: (string | number)[]) {
  return validationItem(
    loc,
    'Text contains an unpaired UTF-16 surrogate (\\ud800-\\udfff without its pair); send valid Unicode.',
    'string_unicode',
  );
}

/**
 * A `preValidation` hook for routes whose body is optional (POST /records/{id}/restore, POST
 * /kt/{id}/approve): no body at all reads as `{}`, so the schema checks what is sent, if anything.
 */
export async function absentBodyAsEmpty(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) request.body = {};
}
