import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';

/**
 * Requests generated from our own OpenAPI document: every operation it lists, with path, query and
 * body values drawn from the declared schemas (valid ones, to reach deep code paths) and from a
 * catalogue of hostile values mixed into any position (wrong types, boundary lengths, `__proto__`
 * keys, deep nesting, unicode edge cases, invalid ids).
 */

export type Schema = Record<string, any>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  /** The OpenAPI path template, e.g. `/records/{id}`. */
  path: string;
  name: string;
  parameters: Parameter[];
  body?: Schema;
  /** Declared response statuses and their JSON schemas. */
  responses: Map<number, Schema | undefined>;
}

export function operationsOf(doc: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const responses = new Map<number, Schema | undefined>();
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        responses.set(Number(status), response?.content?.['application/json']?.schema);
      }
      operations.push({
        method: method.toUpperCase(),
        path,
        name: `${method.toUpperCase()} ${path}`,
        parameters: (op.parameters ?? []) as Parameter[],
        body: op.requestBody?.content?.['application/json']?.schema,
        responses,
      });
    }
  }
  return operations;
}

/** Ids the generator draws from: real objects of the caller's tenant, of another tenant, and unknown. */
export interface IdPools {
  /** By path parameter name (`kt_revision_id`, `id`, `trace_id`) and `any`. */
  [name: string]: string[];
}

const OBJECT_ID = /^\^\[0-9a-f\]\{24\}\$$/;

const UNICODE_EDGES = [
  '',
  ' ',
  '\u00a0',
  '\ufeffBOM',
  '\u202eRTL override',
  'zero\u200bwidth\u200djoiner',
  'e\u0301 combining',
  'Z̵̢̛̖͖̪a̷l̸g̴o̶',
  '😀👩‍👩‍👧‍👦🏳️‍🌈',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈',
  '\uffff\ufffe',
  'line\u2028separator\u2029',
  'tab\tnew\nline\rreturn',
  '中文 العربية עברית',
  '<script>alert(1)</script>',
  "'; DROP TABLE records; --",
  '../../../../etc/passwd',
  '${jndi:ldap://x}{{7*7}}',
  '%00%2e%2e%2f',
  '\\u0000 escaped',
];

/** Strings that are not well-formed UTF-16 or carry NUL: refused, never stored differently. */
export const ILL_FORMED_STRINGS = ['lone \ud800 high', 'lone \udfff low', 'nul \u0000 inside'];

export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'valueOf',
  'toJSON',
  'then',
  'length',
  '__defineGetter__',
];

/** An object with an own key, even `__proto__` (an assignment would set the prototype instead). */
export function withOwnKey(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { n: value };
  return value;
}

/** Values that do not belong anywhere: every position of every request gets some of them. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom<unknown>(
      null,
      true,
      0,
      -1,
      1e308,
      -1e308,
      2 ** 53 + 1,
      0.1,
      '',
      'x'.repeat(10_000),
      [],
      {},
      [null],
      JSON.parse('{"__proto__":{"polluted":"yes"}}'),
      JSON.parse('{"constructor":{"prototype":{"polluted":"yes"}}}'),
      JSON.parse('{"a":{"__proto__":{"polluted":"yes"}}}'),
      nested(63),
      nested(65),
      Array.from({ length: 3000 }, (_, i) => i),
    ),
    fc.constantFrom(...UNICODE_EDGES),
    fc.constantFrom(...PROTO_KEYS).map((key) => withOwnKey({}, key, { polluted: 'yes' })),
    fc.jsonValue({ maxDepth: 3 }),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
  );
}

export interface GenOptions {
  pools: IdPools;
  /** Mix hostile values, missing required keys and unknown keys into the valid shapes. */
  hostile: boolean;
}

/** A fast-check arbitrary for values of `schema`. */
export function valueOf(
  schema: Schema | undefined,
  options: GenOptions,
  key = '',
  depth = 0,
): fc.Arbitrary<unknown> {
  const valid = validValueOf(schema ?? {}, options, key, depth);
  if (!options.hostile) return valid;
  return fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: hostileValue() });
}

function validValueOf(
  schema: Schema,
  options: GenOptions,
  key: string,
  depth: number,
): fc.Arbitrary<unknown> {
  const base = baseValueOf(schema, options, key, depth);
  return schema.nullable
    ? fc.oneof({ weight: 4, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) })
    : base;
}

function idsFor(key: string, options: GenOptions): string[] {
  return options.pools[key] ?? options.pools.any ?? [];
}

function baseValueOf(schema: Schema, options: GenOptions, key: string, depth: number): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0)
    return fc.oneof(...union.map((s: Schema) => valueOf(s, options, key, depth + 1)));
  if (depth > 6) return fc.constant(null);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (typeof schema.pattern === 'string' && OBJECT_ID.test(schema.pattern)) {
        const ids = idsFor(key, options);
        const random = fc.stringMatching(/^[0-9a-f]{24}$/);
        return ids.length ? fc.oneof(fc.constantFrom(...ids), random) : random;
      }
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      if (/_id$/.test(key) && idsFor(key, options).length)
        return fc.oneof(fc.constantFrom(...idsFor(key, options)), fc.string({ maxLength: 30 }));
      const min = schema.minLength ?? 0;
      const max = Math.max(min, Math.min(schema.maxLength ?? 40, 40));
      return fc.oneof(
        { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: max }) },
        { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: max }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(...UNICODE_EDGES.filter((s) => s.length >= min && s.length <= max)),
        },
        ...(options.hostile && schema.maxLength !== undefined
          ? [{ weight: 1, arbitrary: fc.constant('y'.repeat(schema.maxLength + 1)) }]
          : []),
      );
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? -1e6;
      const max = schema.maximum ?? 1e6;
      const inRange =
        type === 'integer'
          ? fc.integer({ min, max })
          : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
      return options.hostile ? fc.oneof(inRange, fc.constantFrom(min - 1, max + 1)) : inRange;
    }
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = Math.max(min, Math.min(schema.maxItems ?? 4, 4));
      const items = fc.array(valueOf(schema.items, options, key, depth + 1), {
        minLength: min,
        maxLength: max,
      });
      return options.hostile && schema.maxItems !== undefined
        ? fc.oneof(
            { weight: 6, arbitrary: items },
            {
              weight: 1,
              arbitrary: valueOf(schema.items, { ...options, hostile: false }, key, depth + 1).map((item) =>
                Array.from({ length: schema.maxItems + 1 }, () => item),
              ),
            },
          )
        : items;
    }
    case 'object':
    default: {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const names = Object.keys(properties);
      if (names.length === 0) {
        // Free-form objects (record data, form schemas): any JSON object.
        return fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 });
      }
      const required: string[] = (schema.required ?? []).filter((n: string) => names.includes(n));
      const record = fc.record(
        Object.fromEntries(names.map((n) => [n, valueOf(properties[n], options, n, depth + 1)])),
        { requiredKeys: options.hostile ? [] : required },
      ) as fc.Arbitrary<Record<string, unknown>>;
      if (!options.hostile) return record;
      const fullRecord = fc.record(
        Object.fromEntries(names.map((n) => [n, valueOf(properties[n], options, n, depth + 1)])),
        { requiredKeys: required },
      ) as fc.Arbitrary<Record<string, unknown>>;
      return fc
        .tuple(
          fc.oneof({ weight: 4, arbitrary: fullRecord }, { weight: 1, arbitrary: record }),
          fc.option(
            fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 8 })), hostileValue()),
            {
              freq: 3,
            },
          ),
        )
        .map(([object, extra]) => (extra ? withOwnKey({ ...object }, extra[0], extra[1]) : object));
    }
  }
}

const INVALID_IDS = [
  'not-an-id',
  'z'.repeat(24),
  '0'.repeat(23),
  '0'.repeat(25),
  'ABCDEF0123456789ABCDEF01',
  '٠١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠١٢٣',
  '__proto__',
  'constructor',
  '..',
  ' '.repeat(24),
  '0'.repeat(24) + '%00',
  "' OR '1'='1",
  'x'.repeat(199),
  '😀'.repeat(24),
];

export interface GeneratedRequest {
  method: string;
  /** Path with query string, ready for fetch. */
  url: string;
  /** Raw JSON text of the body, or undefined. */
  body?: string;
}

/** Requests for one operation: path ids from the pools or invalid, query and body from their schemas. */
export function requestsFor(operation: Operation, options: GenOptions): fc.Arbitrary<GeneratedRequest> {
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const queryParams = operation.parameters.filter((p) => p.in === 'query');
  const pathValues = fc.tuple(
    ...pathParams.map((p) => {
      const ids = options.pools[p.name] ?? options.pools.any ?? [];
      const valid = ids.length ? fc.constantFrom(...ids) : fc.stringMatching(/^[0-9a-f]{24}$/);
      return options.hostile
        ? fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: fc.constantFrom(...INVALID_IDS) })
        : valid;
    }),
  );
  const query = fc.tuple(
    ...queryParams.map((p) =>
      fc.option(
        valueOf(p.schema, options, p.name).map((v) => [p.name, queryText(v)] as [string, string]),
        { freq: 2 },
      ),
    ),
    options.hostile
      ? fc.option(
          fc.tuple(
            fc.oneof(
              fc.constantFrom(
                '__proto__',
                'constructor[prototype][polluted]',
                '__proto__[polluted]',
                'limit',
              ),
              fc.string({ maxLength: 10 }),
            ),
            fc.oneof(fc.constantFrom('yes', '', '-1', 'true'), fc.string({ maxLength: 10 })),
          ),
        )
      : fc.constant(null),
  );
  const body =
    operation.body !== undefined
      ? valueOf(operation.body, options).map((v) => JSON.stringify(v))
      : fc.constant(undefined);
  return fc.tuple(pathValues, query, body).map(([ids, pairs, text]) => {
    let path = operation.path;
    pathParams.forEach((p, i) => (path = path.replace(`{${p.name}}`, encodeURIComponent(String(ids[i])))));
    const search = new URLSearchParams();
    for (const pair of pairs) if (pair) search.append(pair[0], pair[1]);
    const qs = search.toString();
    return { method: operation.method, url: qs ? `${path}?${qs}` : path, body: text };
  });
}

function queryText(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** Validators of the declared success responses. */
export class ResponseChecker {
  private readonly ajv = addFormats.default(new Ajv.default({ strict: false, allErrors: true }));
  private readonly cache = new Map<string, ValidateFunction>();

  check(operation: Operation, status: number, body: unknown): string | undefined {
    const schema = operation.responses.get(status);
    if (!schema) return undefined;
    const id = `${operation.name} ${status}`;
    let validate = this.cache.get(id);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.cache.set(id, validate);
    }
    return validate(body) ? undefined : this.ajv.errorsText(validate.errors);
  }
}
