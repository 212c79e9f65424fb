import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FormComponent } from '../../../contract/src/form.js';
import type { ServiceRecord } from '../../../contract/src/record.js';
import type { ExportedField } from './model.js';
import { buildFieldMap, extendFieldMap } from './field-map.js';
import { resolveSemanticName } from './names.js';
import { mapRecord } from './record.js';

// Few distinct keys and names, so that collisions, shared prefixes and nesting happen often.
const key = fc.constantFrom('a', 'b', 'c', 'name', 'a.b', 'b.c', 'x.y.z', '__proto__');
const name = fc.constantFrom('Name', 'A', 'a', 'name', 'Name (b)', '');
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const leaf: fc.Arbitrary<FormComponent> = fc.record(
  {
    type: fc.constantFrom('textfield', 'select', 'checklist', 'radio', 'text'),
    key: maybe(key),
    label: maybe(name),
    properties: maybe(fc.record({ 'service-key': maybe(name) }, { requiredKeys: [] })),
    values: maybe(fc.array(fc.record({ label: name, value: fc.constantFrom('v1', 'v2') }), { maxLength: 2 })),
  },
  { requiredKeys: ['type'] },
);

const { component } = fc.letrec<{ component: FormComponent }>((tie) => ({
  component: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record(
      {
        type: fc.constant('group'),
        path: maybe(key),
        components: fc.array(tie('component'), { maxLength: 3 }),
      },
      { requiredKeys: ['type', 'components'] },
    ),
    fc.record(
      {
        type: fc.constant('dynamiclist'),
        path: key,
        label: maybe(name),
        components: fc.array(tie('component'), { maxLength: 3 }),
      },
      { requiredKeys: ['type', 'path', 'components'] },
    ),
  ),
}));

const schema = fc.array(component, { maxLength: 6 }).map((components) => ({ components }));

// Record data over the same keys: scalars, lists, nested objects and lists of objects.
const { data } = fc.letrec<{ data: Record<string, unknown>; value: unknown }>((tie) => ({
  data: fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant('leaf'),
    fc.array(fc.constant('leaf'), { maxLength: 2 }),
    tie('data'),
    fc.array(tie('data'), { maxLength: 2 }),
  ),
}));

/** Replaces every leaf with a distinct token, so each value can be counted in the output. */
function tokenize(input: Record<string, unknown>): { data: Record<string, unknown>; tokens: string[] } {
  const tokens: string[] = [];
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v)]));
    }
    const token = `tok${tokens.length}#`;
    tokens.push(token);
    return token;
  };
  return { data: visit(input) as Record<string, unknown>, tokens };
}

const record = (values: Record<string, unknown>): ServiceRecord => ({
  _id: '0123456789abcdef01234567',
  name: 'r',
  form: {},
  version: '1.0',
  data: values,
  read_only: false,
  metadata: { tenant_id: 't' },
  context: { knowledge_unit_topic_id: '0123456789abcdef01234568' },
  audit_info: {
    user_id_created: 'u',
    timestamp_created: '2026-01-01T00:00:00Z',
    user_id_last_updated: null,
    timestamp_last_updated: null,
    last_action: 'created',
  },
});

function* scopes(fields: ExportedField[]): Generator<ExportedField[]> {
  yield fields;
  for (const field of fields) if (field.itemFields) yield* scopes(field.itemFields);
}

const runs = { numRuns: 400 };

describe('mapping properties', () => {
  it('never loses or repeats a value: every data value appears in the output exactly once', () => {
    fc.assert(
      fc.property(schema, data, (form, raw) => {
        const { data: tokenized, tokens } = tokenize(raw);
        const output = JSON.stringify(mapRecord(record(tokenized), buildFieldMap(form)).record.values);
        for (const token of tokens) expect(output.split(token).length - 1).toBe(1);
        expect(output.match(/tok\d+#/g) ?? []).toHaveLength(tokens.length);
      }),
      runs,
    );
  });

  it('gives every field of a scope a distinct name', () => {
    fc.assert(
      fc.property(schema, data, (form, raw) => {
        const map = buildFieldMap(form);
        for (const fields of scopes(map.fields)) {
          expect(new Set(fields.map((f) => f.name)).size).toBe(fields.length);
          expect(new Set(fields.map((f) => f.key)).size).toBe(fields.length);
        }
        const { newFields } = mapRecord(record(raw), map);
        const all = [...map.fields, ...newFields].map((f) => f.name);
        expect(new Set(all).size).toBe(all.length);
      }),
      runs,
    );
  });

  it('names each field by the document priority, disambiguating only on collision', () => {
    fc.assert(
      fc.property(schema, (form) => {
        const map = buildFieldMap(form);
        const seen = new Set<string>();
        for (const field of map.fields) {
          const component =
            field.type === 'dynamiclist' ? undefined : findComponent(form.components, field.key);
          if (!component) {
            seen.add(field.name);
            continue;
          }
          const expected = resolveSemanticName(component, field.key);
          expect(field.source).toBe(expected.source);
          if (field.name !== expected.name) {
            expect(seen.has(expected.name)).toBe(true);
            expect(field.name.startsWith(`${expected.name} (${field.key})`)).toBe(true);
          }
          seen.add(field.name);
        }
      }),
      runs,
    );
  });

  it('is deterministic and stable once new fields are appended', () => {
    fc.assert(
      fc.property(schema, data, (form, raw) => {
        const map = buildFieldMap(form);
        expect(buildFieldMap(structuredClone(form))).toEqual(map);
        const first = mapRecord(record(raw), map);
        expect(mapRecord(record(structuredClone(raw)), map)).toEqual(first);
        const again = mapRecord(record(raw), extendFieldMap(map, first.newFields));
        expect(again.newFields).toEqual([]);
        expect(again.record.values).toEqual(first.record.values);
      }),
      runs,
    );
  });
});

/** The top-level component whose data key is `key` (outside dynamiclists), first in schema order. */
function findComponent(components: unknown, key: string, prefix = ''): FormComponent | undefined {
  if (!Array.isArray(components)) return undefined;
  for (const component of components as FormComponent[]) {
    if (component.type === 'dynamiclist') continue;
    if (Array.isArray(component.components)) {
      const inner = component.path ? (prefix ? `${prefix}.${component.path}` : component.path) : prefix;
      const found = findComponent(component.components, key, inner);
      if (found) return found;
      continue;
    }
    if (component.key && (prefix ? `${prefix}.${component.key}` : component.key) === key) return component;
  }
  return undefined;
}
