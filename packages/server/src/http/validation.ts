import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import type { ValidationErrorItem } from '@rxs/contract';

/**
 * Two validators: query strings and path parameters are text, so they are coerced to the declared
 * types; bodies are JSON and are checked exactly (no coercion, no silently dropped unknown fields),
 * reporting every problem at once.
 */
export function registerValidators(app: FastifyInstance): void {
  const common = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false } as const;
  const bodyAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
  const textAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array' }));
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
  app.setValidatorCompiler(compiler);
}

const PART_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

/** Turns ajv's errors into the contract's 422 items: one per problem, with a `loc` path. */
export function toValidationItems(errors: ErrorObject[], context: string): ValidationErrorItem[] {
  const part = PART_NAMES[context] ?? context;
  const items: ValidationErrorItem[] = [];
  const seen = new Set<string>();
  // Errors under a union (anyOf) are summarised by the union's own error at the same path.
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const error of errors) {
    if (error.keyword !== 'anyOf' && unionPaths.has(error.instancePath)) continue;
    const item = toItem(error, part, errors);
    const id = JSON.stringify(item.loc) + item.type;
    if (seen.has(id)) continue;
    seen.add(id);
    items.push(item);
  }
  return items;
}

function toItem(error: ErrorObject, part: string, all: ErrorObject[]): ValidationErrorItem {
  const loc: (string | number)[] = [part, ...pathSegments(error.instancePath)];
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { loc: [...loc, String(params.missingProperty)], msg: 'Field required', type: 'missing' };
    case 'additionalProperties':
      return {
        loc: [...loc, String(params.additionalProperty)],
        msg: `Unknown field "${String(params.additionalProperty)}": extra inputs are not permitted`,
        type: 'extra_forbidden',
      };
    case 'type':
      return {
        loc,
        msg: `Input should be of type ${String(params.type)}`,
        type: `${String(params.type)}_type`,
      };
    case 'anyOf': {
      const allowed = all
        .filter((e) => e.instancePath === error.instancePath && e.keyword === 'const')
        .map((e) => JSON.stringify((e.params as { allowedValue: unknown }).allowedValue));
      return allowed.length > 0
        ? { loc, msg: `Input should be one of ${allowed.join(', ')}`, type: 'enum' }
        : { loc, msg: 'Input does not match any allowed shape', type: 'union_mismatch' };
    }
    case 'const':
    case 'enum':
      return { loc, msg: `Input ${error.message ?? 'is not allowed'}`, type: 'enum' };
    case 'minLength':
      return {
        loc,
        msg: `String should have at least ${String(params.limit)} characters`,
        type: 'string_too_short',
      };
    case 'maxLength':
      return {
        loc,
        msg: `String should have at most ${String(params.limit)} characters`,
        type: 'string_too_long',
      };
    case 'pattern':
      return {
        loc,
        msg: `String should match pattern '${String(params.pattern)}'`,
        type: 'string_pattern_mismatch',
      };
    case 'minimum':
      return {
        loc,
        msg: `Input should be greater than or equal to ${String(params.limit)}`,
        type: 'greater_than_equal',
      };
    case 'maximum':
      return {
        loc,
        msg: `Input should be less than or equal to ${String(params.limit)}`,
        type: 'less_than_equal',
      };
    case 'maxItems':
      return { loc, msg: `List should have at most ${String(params.limit)} items`, type: 'too_long' };
    case 'minItems':
      return { loc, msg: `List should have at least ${String(params.limit)} items`, type: 'too_short' };
    case 'format':
      return {
        loc,
        msg: `Input should be a valid ${String(params.format)}`,
        type: `${String(params.format)}_parsing`,
      };
    default:
      return { loc, msg: error.message ?? 'Invalid input', type: error.keyword };
  }
}

function pathSegments(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}
