import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FormComponent } from '../../../contract/src/form.js';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import { buildFieldMap } from './field-map.js';

const sampleTopic = JSON.parse(
  readFileSync(new URL('../../../../reference/samples/kt_system_requirements.json', import.meta.url), 'utf8'),
) as KnowledgeTopicRevision;

const schema = (...components: FormComponent[]) => ({ components });

describe('buildFieldMap on the sample System Requirements topic', () => {
  const map = buildFieldMap(sampleTopic.knowledge_topic_schema);

  it('finds every keyed component, in schema order, named by its label', () => {
    expect(map.fields.map((f) => [f.key, f.name, f.source])).toEqual([
      ['name', 'Name', 'label'],
      ['description', 'Description', 'label'],
      ['type', 'Type', 'label'],
      ['textfield_ollccr', 'specify Other Type', 'label'],
      ['checklist_kgd0ri', 'Requirement concerning', 'label'],
      ['textfield_hbgy8i', 'specify Requirements concerning Other', 'label'],
      ['select_1jzpmh', 'Infrastructure', 'label'],
      ['textfield_uu051a', 'specfiy Other Infrastructure', 'label'],
      ['source', 'Source', 'label'],
      ['textfield_v8rfy', 'specify Other Source', 'label'],
      ['priority', 'Priority', 'label'],
      ['justification', 'Justification', 'label'],
    ]);
    expect(map.warnings).toEqual([]);
  });

  it('records options with labels for selects and checklists, and none for text fields', () => {
    const concerning = map.fields.find((f) => f.key === 'checklist_kgd0ri');
    expect(concerning?.type).toBe('checklist');
    expect(concerning?.options?.[0]).toEqual({
      value: 'Monitoring and Measurement',
      label: 'Cleanliness of Product',
    });
    expect(map.fields.find((f) => f.key === 'priority')?.options?.map((o) => o.value)).toEqual([
      'value',
      'low',
      'medium',
      'high',
      'n/a',
    ]);
    expect(map.fields.find((f) => f.key === 'name')?.options).toBeUndefined();
  });
});

describe('semantic name priority', () => {
  it('prefers service-key, then label, then the key', () => {
    const { fields } = buildFieldMap(
      schema(
        { type: 'textfield', key: 'k1', label: 'Label 1', properties: { 'service-key': 'svc_1' } },
        { type: 'textfield', key: 'k2', label: 'Label 2' },
        { type: 'textfield', key: 'k3' },
      ),
    );
    expect(fields.map((f) => [f.name, f.source])).toEqual([
      ['svc_1', 'service-key'],
      ['Label 2', 'label'],
      ['k3', 'key'],
    ]);
  });

  it('ignores empty or non-string service-keys and empty labels', () => {
    const { fields } = buildFieldMap(
      schema(
        { type: 'textfield', key: 'k1', label: 'Label', properties: { 'service-key': '' } },
        { type: 'textfield', key: 'k2', label: '', properties: { 'service-key': 42 } },
        { type: 'textfield', key: 'k3', label: '', properties: { other: 'x' } },
      ),
    );
    expect(fields.map((f) => f.name)).toEqual(['Label', 'k2', 'k3']);
  });

  it('skips components without a key and never hardcodes one', () => {
    const { fields } = buildFieldMap(
      schema(
        { type: 'text', text: 'Intro' },
        { type: 'textfield', label: 'No key' },
        { type: 'textfield', key: '', label: 'Empty key' },
        { type: 'spacer' },
        { type: 'textfield', key: 'anything_at_all', label: 'Kept' },
      ),
    );
    expect(fields.map((f) => f.key)).toEqual(['anything_at_all']);
  });
});

describe('nested components', () => {
  it('prefixes children of a group with a path and keeps those of a group without one', () => {
    const { fields } = buildFieldMap(
      schema(
        {
          type: 'group',
          path: 'address',
          components: [
            { type: 'textfield', key: 'street', label: 'Street' },
            { type: 'group', components: [{ type: 'textfield', key: 'city', label: 'City' }] },
          ],
        },
        {
          type: 'group',
          label: 'Layout only',
          components: [{ type: 'number', key: 'count', label: 'Count' }],
        },
      ),
    );
    expect(fields.map((f) => [f.key, f.name])).toEqual([
      ['address.street', 'Street'],
      ['address.city', 'City'],
      ['count', 'Count'],
    ]);
  });

  it('turns a dynamiclist into one field with item fields keyed relative to the item', () => {
    const { fields } = buildFieldMap(
      schema({
        type: 'group',
        path: 'risk',
        components: [
          {
            type: 'dynamiclist',
            path: 'hazards',
            label: 'Hazards',
            components: [
              { type: 'textfield', key: 'title', label: 'Hazard' },
              { type: 'select', key: 'severity', label: 'Severity', values: [{ label: 'High', value: 'h' }] },
              {
                type: 'group',
                path: 'owner',
                components: [{ type: 'textfield', key: 'name', label: 'Owner' }],
              },
            ],
          },
        ],
      }),
    );
    expect(fields).toHaveLength(1);
    const [list] = fields;
    expect(list).toMatchObject({
      key: 'risk.hazards',
      name: 'Hazards',
      source: 'label',
      type: 'dynamiclist',
    });
    expect(list?.itemFields?.map((f) => [f.key, f.name])).toEqual([
      ['title', 'Hazard'],
      ['severity', 'Severity'],
      ['owner.name', 'Owner'],
    ]);
    expect(list?.itemFields?.[1]?.options).toEqual([{ value: 'h', label: 'High' }]);
  });

  it('names a dynamiclist by service-key, then label, then path', () => {
    const list = (extra: Partial<FormComponent>) =>
      buildFieldMap(schema({ type: 'dynamiclist', path: 'items', components: [], ...extra })).fields[0]?.name;
    expect(list({ label: 'Items', properties: { 'service-key': 'svc_items' } })).toBe('svc_items');
    expect(list({ label: 'Items' })).toBe('Items');
    expect(list({})).toBe('items');
  });

  it('finds components in other containers that hold components', () => {
    const { fields } = buildFieldMap(
      schema({ type: 'iframe-group', components: [{ type: 'textfield', key: 'inner', label: 'Inner' }] }),
    );
    expect(fields.map((f) => f.key)).toEqual(['inner']);
  });

  it('tolerates malformed schemas', () => {
    expect(
      buildFieldMap({ components: [null, 'x', 3, [], { key: 'ok' }] as never }).fields.map((f) => f.key),
    ).toEqual(['ok']);
    expect(buildFieldMap({} as never).fields).toEqual([]);
  });
});

describe('collisions', () => {
  it('keeps the first key under the name and disambiguates later ones with their key, warning once each', () => {
    const map = buildFieldMap(
      schema(
        { type: 'textfield', key: 'name', label: 'Name' },
        { type: 'textfield', key: 'textfield_abc', label: 'Name' },
        { type: 'textfield', key: 'textfield_def', properties: { 'service-key': 'Name' } },
      ),
    );
    expect(map.fields.map((f) => f.name)).toEqual(['Name', 'Name (textfield_abc)', 'Name (textfield_def)']);
    expect(map.warnings).toHaveLength(2);
    expect(map.warnings[0]).toContain('"name"');
    expect(map.warnings[0]).toContain('"textfield_abc"');
  });

  it('does not let a disambiguated name take a name a later field resolves to naturally', () => {
    const map = buildFieldMap(
      schema(
        { type: 'textfield', key: 'a', label: 'X' },
        { type: 'textfield', key: 'b', label: 'X' },
        { type: 'textfield', key: 'c', label: 'X (b)' },
      ),
    );
    const names = map.fields.map((f) => f.name);
    expect(names).toEqual(['X', 'X (b)', 'X (b) (c)']);
    expect(new Set(names).size).toBe(3);
  });

  it('exports a key used by two components once, with a warning', () => {
    const map = buildFieldMap(
      schema(
        { type: 'textfield', key: 'dup', label: 'First' },
        { type: 'textarea', key: 'dup', label: 'Second' },
      ),
    );
    expect(map.fields.map((f) => f.name)).toEqual(['First']);
    expect(map.warnings[0]).toContain('"dup"');
  });

  it('warns when one key lies inside the value of another', () => {
    const map = buildFieldMap(schema({ type: 'textfield', key: 'a' }, { type: 'textfield', key: 'a.b' }));
    expect(map.fields.map((f) => f.key)).toEqual(['a', 'a.b']);
    expect(map.warnings.join()).toContain('"a.b"');
  });

  it('names item fields of a list independently of the topic fields', () => {
    const map = buildFieldMap(
      schema(
        { type: 'textfield', key: 'title', label: 'Title' },
        {
          type: 'dynamiclist',
          path: 'rows',
          components: [{ type: 'textfield', key: 'title', label: 'Title' }],
        },
      ),
    );
    expect(map.fields[1]?.itemFields?.[0]?.name).toBe('Title');
    expect(map.warnings).toEqual([]);
  });

  it('is deterministic', () => {
    const input = sampleTopic.knowledge_topic_schema;
    expect(buildFieldMap(structuredClone(input))).toEqual(buildFieldMap(structuredClone(input)));
  });
});
