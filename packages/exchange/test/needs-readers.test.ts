import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExportPart } from '../src/export/model.js';
import { defaultExportMapping, exportParts, type ExportMapping } from '../src/export/procedure.js';
import { createWriter, writeExport } from '../src/export/writers/index.js';
import { cellText } from '../src/export/writers/cells.js';
import { NEED_ID_PATTERN, NeedIdCollisionError, needId } from '../src/export/writers/needs.js';
import {
  HOSTILE_VALUES,
  hostileRevisionIds,
  hostileSource,
  WIDE_RECORD_KEYS,
} from './support/hostile-corpus.js';
import {
  collectParts,
  jsonExport,
  PYTHON,
  READER_CASES,
  referenceSource,
  scratchDir,
  shouldSkip,
  writeFile,
  type JsonExport,
} from './support/spreadsheet-readers.js';

/**
 * The Sphinx-Needs export read back as Sphinx reads it: each need's description parsed by docutils
 * exactly as Sphinx-Needs' needimport parses it (nested_parse of its lines), which must find
 * nothing but paragraphs and literal blocks of text equal to the record's value (after the
 * normalisations docs/formats/needs.md lists); every option on every need, equal to the JSON
 * export; and the file valid against a JSON schema of the Sphinx-Needs format.
 */

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** docutils, the parser Sphinx uses: Debian's python3-docutils for /usr/bin/python3. */
function missingDocutils(): string | undefined {
  const run = spawnSync(PYTHON, ['-c', 'import docutils.core'], { encoding: 'utf8' });
  return run.status === 0
    ? undefined
    : `docutils is not installed for ${PYTHON}: install the Debian package python3-docutils (apt-get install python3-docutils), as .ci/run does.`;
}
const docutils = missingDocutils();
const scratch = scratchDir();
afterAll(() => scratch.dispose());

interface NeedsJson {
  current_version: string;
  versions: Record<
    string,
    {
      needs_amount: number;
      needs_schema: { properties: Record<string, { field_type?: string; incoming?: string }> };
      needs: Record<string, Record<string, unknown>>;
    }
  >;
}

async function needsExport(parts: readonly ExportPart[], file: string) {
  await writeFile('needs', parts, file);
  const doc = JSON.parse(readFileSync(file, 'utf8')) as NeedsJson;
  return { doc, needs: doc.versions[doc.current_version]!.needs };
}

/** Each need as docutils parses its content: the node types of the doctree and its text. */
function docutilsReading(file: string): Record<string, { nodes: string[]; text: string | null }> {
  return JSON.parse(
    execFileSync(PYTHON, [fixture('needs-docutils.py'), file], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  );
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Strings as Sphinx can hold them (docs/formats/needs.md): NUL and lone surrogates as U+FFFD. */
const sphinxSafe = (text: string) => text.replaceAll('\0', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');

/**
 * The text a Sphinx reader gets for a description (docs/formats/needs.md): Sphinx-Needs splits it
 * into lines as Python's splitlines() does (so CR, CRLF, VT, FF, FS, GS, RS, NEL, LS and PS end a
 * line), RST cannot hold blank lines at its start and end, and NUL and lone surrogates are U+FFFD.
 */
function sphinxText(value: string): string {
  const lines = sphinxSafe(value).split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/);
  const blank = (line: string) => /^[\s\x1c-\x1f\x85]*$/.test(line);
  while (lines.length > 0 && blank(lines[0]!)) lines.shift();
  while (lines.length > 0 && blank(lines.at(-1)!)) lines.pop();
  return lines.join('\n');
}

/** The node types a literal text may become: the need, its paragraphs or literal block, text. */
const TEXT_NODES = ['Text', 'container', 'literal_block', 'paragraph'];

type JsonTopic = JsonExport['topics'][number] & {
  presentation: { descriptionField?: string; titleField?: string; needType: string };
};

describe.each(READER_CASES)('needs.json of $label', ({ label, load }) => {
  const base = label.replaceAll(' ', '-');

  it.skipIf(shouldSkip(docutils))(
    'docutils reads every description as literal text equal to the record value, nothing else',
    async () => {
      if (docutils) throw new Error(docutils);
      const parts = await load();
      const json = await jsonExport(parts, scratch.path);
      const file = join(scratch.path, `${base}-docutils.json`);
      const { needs } = await needsExport(parts, file);
      const reading = docutilsReading(file);
      const topic = json.topics[0] as JsonTopic;
      const descriptionField = topic.presentation.descriptionField!;
      expect(Object.keys(reading)).toHaveLength(topic.records.length);
      for (const record of topic.records) {
        const id = needId(record.readableId);
        const value = cellText(record.values[descriptionField]);
        const read = reading[id]!;
        expect({ id, value, nodes: read.nodes.filter((node) => !TEXT_NODES.includes(node)) }).toEqual({
          id,
          value,
          nodes: [],
        });
        expect({ id, text: read.text }).toEqual({ id, text: sphinxText(value) });
        expect(needs[id]!.description).not.toBe(undefined);
      }
      if (label === 'the hostile corpus') {
        // Exactly these values come back changed, as documented; every other one is equal.
        const changed = HOSTILE_VALUES.filter(({ value }) => sphinxText(value) !== value).map((v) => v.label);
        expect(changed).toEqual([
          'CR',
          'CRLF',
          'trailing LF',
          'only spaces',
          'C0 controls',
          'C1 controls',
          'lone surrogates',
        ]);
        // Plain prose stays prose (paragraphs, rendered as text), not a code block.
        const prose = topic.records.find((r) => r.values[descriptionField] === 'He said "stop" and \'go\'')!;
        expect(reading[needId(prose.readableId)]!.nodes).toEqual(['Text', 'container', 'paragraph']);
      }
    },
    60_000,
  );

  it('writes every option on every need, each value equal to the JSON export', async () => {
    const parts = await load();
    const json = await jsonExport(parts, scratch.path);
    const { needs } = await needsExport(parts, join(scratch.path, `${base}-options.json`));
    const topic = json.topics[0] as JsonTopic;
    const keys = Object.keys(Object.values(needs)[0]!);
    const option = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '_');
    for (const record of topic.records) {
      const id = needId(record.readableId);
      const need = needs[id]!;
      expect(Object.keys(need)).toEqual(keys);
      expect(need).toMatchObject({
        id,
        type: topic.presentation.needType,
        rxs_record_id: record.id,
        rxs_record_version: record.version,
        rxs_topic_revision_id: record.topicRevisionId,
      });
      for (const field of topic.fields) {
        if (field.name === topic.presentation.descriptionField) continue;
        const name = ['type', 'status', 'title'].includes(option(field.name))
          ? `${option(field.name)}_field`
          : option(field.name);
        expect({ id, name, value: need[name] }).toEqual({
          id,
          name,
          value: sphinxSafe(cellText(record.values[field.name])),
        });
      }
      const statusField = (topic.presentation as { statusField?: string }).statusField;
      const status = statusField === undefined ? '' : cellText(record.values[statusField]);
      expect(need.status).toBe(status === '' ? null : sphinxSafe(status));
    }
    // Suspect links on the need they leave, by need id, as the JSON export marks them.
    const exported = new Set(topic.records.map((r) => r.id));
    const readable = new Map(topic.records.map((r) => [r.id, r.readableId]));
    for (const record of topic.records) {
      const suspect = json.traces
        .filter((t) => t.suspect && t.source.id === record.id && exported.has(t.target.id))
        .map((t) => needId(readable.get(t.target.id)!));
      expect({ id: record.readableId, suspect: needs[needId(record.readableId)]!.rxs_suspect_links }).toEqual(
        {
          id: record.readableId,
          suspect: suspect.join(', '),
        },
      );
    }
    if (json.traces.length > 1) expect(json.traces.some((t) => t.suspect)).toBe(true);
    // Links from traces, by need id: the first record to the next two.
    const [first, second, third] = topic.records;
    expect(needs[needId(first!.readableId)]!.links).toEqual([
      needId(second!.readableId),
      needId(third!.readableId),
    ]);
    if (label === 'the reference sample') {
      expect(Object.keys(needs)).toEqual(['REQ_001', 'REQ_002', 'REQ_003', 'REQ_004']);
      expect(needs.REQ_001!.title).toBe('Sterilization temperature range is better');
    }
  });

  it('is valid against the JSON schema of the Sphinx-Needs needs.json format', async () => {
    const parts = await load();
    const { doc, needs } = await needsExport(parts, join(scratch.path, `${base}-schema.json`));
    const schema = JSON.parse(readFileSync(fixture('needs-json.schema.json'), 'utf8'));
    const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    // The schema is no formality: a need without title, or with content twice, is refused.
    const broken = (need: Record<string, unknown>) => ({ ...doc, versions: { '1': { needs: { A: need } } } });
    expect(validate(broken({ id: 'A', type: 'req', description: '' }))).toBe(false);
    expect(validate(broken({ id: 'A', title: '', type: 'req', description: '', content: '' }))).toBe(false);
    expect(validate(broken({ id: 'A', title: '', type: 'req', description: '' }))).toBe(true);
    expect(doc.versions[doc.current_version]!.needs_amount).toBe(Object.keys(needs).length);
    for (const [id, need] of Object.entries(needs)) {
      expect(need.id).toBe(id);
      expect(id).toMatch(NEED_ID_PATTERN);
    }
  });
});

/** The default mapping, with the hostile topic's links to itself named `verifies`. */
const verifies: ExportMapping = {
  ...defaultExportMapping,
  linkType: (source, target) => ({
    name: 'verifies',
    incoming: 'verified by',
    sourceTopicHistoryId: source.historyId,
    targetTopicHistoryId: target.historyId,
  }),
};

describe('needs.json links and ids', () => {
  it('puts traces of a named link type under that option, on every need, and lists the type', async () => {
    const parts: ExportPart[] = [];
    for await (const part of exportParts(hostileSource(), {
      revisionIds: hostileRevisionIds(),
      traces: true,
      mapping: verifies,
    }))
      parts.push(part);
    const { doc, needs } = await needsExport(parts, join(scratch.path, 'verifies.json'));
    const records = parts.flatMap((part) => (part.kind === 'record' ? [part.record] : []));
    const [first, second, third] = records.map((r) => needId(r.readableId));
    expect(needs[first!]).toMatchObject({ verifies: [second, third], links: [] });
    for (const need of Object.values(needs)) expect(need.verifies).toBeInstanceOf(Array);
    // The file says which options are link types, so a conf.py can declare needs_extra_links.
    expect(doc.versions[doc.current_version]!.needs_schema.properties.verifies).toMatchObject({
      field_type: 'links',
      incoming: 'verified by',
    });
  });

  it('writes the 16,400 options of a very wide record on every need', async () => {
    const parts = await collectParts(hostileSource({ wide: true }), hostileRevisionIds({ wide: true }), {
      maxColumns: 20_000,
    });
    const { needs } = await needsExport(parts, join(scratch.path, 'wide.json'));
    const wide = needs.WIDE_001!;
    expect(wide).toMatchObject({ k0: 'v0', k16399: 'v16399' });
    const keys = Object.keys(wide);
    expect(keys.length).toBeGreaterThan(WIDE_RECORD_KEYS);
    for (const need of Object.values(needs)) expect(Object.keys(need).join()).toBe(keys.join());
    expect(Object.values(needs)[0]!.k16399).toBe('');
  }, 60_000);

  it('refuses two readable ids that become one need id, naming both records', async () => {
    const { source, revisionIds } = referenceSource();
    const parts = await collectParts(source, revisionIds);
    const records = parts.flatMap((part) => (part.kind === 'record' ? [part.record] : []));
    records[1]!.readableId = 'req-001'; // unique for the procedure, but the same need id as REQ_001
    const writer = createWriter('needs', new PassThrough().resume());
    const error = await writeExport(writer, parts).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(NeedIdCollisionError);
    expect((error as Error).message).toContain(records[0]!.id);
    expect((error as Error).message).toContain(records[1]!.id);
  });
});
