import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NamedValue } from '../src/mapping/record-input.js';
import {
  ImportFileError,
  openRowSource,
  readSpecHierarchies,
  readSpecRelations,
  type Cell,
  type SpecHierarchy,
  type SourceRow,
  type SpecRelation,
} from '../src/index.js';
import { PYTHON, scratchDir, shouldSkip } from './support/spreadsheet-readers.js';

/**
 * Real ReqIF files of other tools (fixtures/reqif, their sources and licences in SOURCES.md), each
 * read by our reader and compared with what the file holds as StrictDoc's `reqif` library reads it
 * (fixtures/reqif/expected/<file>.json, written by support/reqif-expected.py, whose docstring states
 * the rules: the record's name, values by attribute LONG-NAME, XHTML as text): the spec objects of
 * each SPEC-OBJECT-TYPE in file order, their identity (IDENTIFIER), name and values; the relations;
 * each SPECIFICATION's hierarchy.
 */

const fixtures = new URL('./fixtures/reqif/', import.meta.url).pathname;
const SCRIPT = new URL('./support/reqif-expected.py', import.meta.url).pathname;
const VENDORED = new URL('./vendor/strictdoc-reqif', import.meta.url).pathname;

interface ExpectedValue {
  kind: string;
  value: unknown;
  keys?: (string | null)[];
  embedded?: { data: string | null; type: string | null }[];
}
interface ExpectedObject {
  identifier: string;
  type: string | null;
  name: string | null;
  nameFrom: string | null;
  values: Record<string, ExpectedValue>;
  defaults: Record<string, ExpectedValue>;
}
interface Expectation {
  file: string;
  readBy: string;
  tool: { reqIfToolId: string | null; sourceToolId: string | null };
  specObjectCount: number;
  specObjectTypes: (string | null)[];
  objects: ExpectedObject[];
  relations: { source: string | null; target: string | null; type: string | null }[];
  specifications: {
    identifier: string;
    name: string | null;
    hierarchy: { object: string; level: number }[];
  }[];
}

/** The corpus, by producing tool (the header's SOURCE-TOOL-ID where it names the tool). */
const CORPUS = [
  'capella-requirements-vp.reqif',
  'enterprise-architect-8.reqif',
  'doors-fragment.reqif',
  'doors-spielwiese.reqifz',
  'polarion-roundtrip.reqif',
  'strictdoc.reqif',
  'reqif-studio-anonymized.reqif',
  'fmstudio-traceability-template.reqif',
  'pror-selection-management.reqif',
  'rmf-tc1000-simple-content.reqif',
  'rmf-tc1100-system-attributes.reqif',
  'rmf-tc1200-formatted-content.reqif',
  'rmf-tc1300-spec-relation.reqif',
  'rmf-tc1400-internal-table.reqif',
  'rmf-tc1800-his-exchange.reqif',
  'reqif-editor.reqif',
] as const;

/** Files of spec objects without types, which the reader refuses as a fragment of an exchange. */
const FRAGMENTS: ReadonlySet<string> = new Set(['doors-fragment.reqif']);

/**
 * Attributes the reader takes as the record's facts only, not as values (reqif-source.ts): an rxs
 * export's own. `ReqIF.ForeignID` (the readable id) and `ReqIF.Name` (the first source of the name)
 * are values too, as every `ReqIF.*` attribute is: a column the user may map to a field.
 */
const NOT_VALUES: ReadonlySet<string> = new Set([
  'RXS.RecordId',
  'RXS.SourceId',
  'RXS.RecordName',
  'RXS.Version',
]);

const expectationOf = (file: string): Expectation =>
  JSON.parse(readFileSync(join(fixtures, 'expected', `${file}.json`), 'utf8')) as Expectation;

/** The rows our reader gives for the objects of one SPEC-OBJECT-TYPE. */
async function rowsOf(file: string, types: readonly (string | null)[], type: string | null) {
  const options = types.length > 1 && type !== null ? { specType: type } : {};
  const rows: SourceRow[] = [];
  for await (const row of openRowSource(join(fixtures, file), options).rows()) rows.push(row);
  return rows;
}

/** A cell as the expectation writes it: text, a number or boolean, or enumeration labels. */
function cellShape(cell: Cell): unknown {
  if ('text' in cell) return { text: cell.text };
  const { value } = cell;
  const label = (named: unknown) =>
    named instanceof NamedValue ? named.names[named.names.length - 1] : named;
  if (value instanceof NamedValue) return { labels: [label(value)] };
  if (Array.isArray(value)) return { labels: value.map(label) };
  return { value };
}

function expectedShape({ kind, value }: ExpectedValue): unknown {
  switch (kind) {
    case 'ENUMERATION':
      return { labels: value };
    case 'INTEGER':
    case 'REAL':
    case 'BOOLEAN':
      return { value };
    default:
      return { text: value };
  }
}

const textOf = ({ kind, value }: ExpectedValue) =>
  kind === 'INTEGER' || kind === 'REAL' ? String(value) : (value as string);

/** What the reader gives of an object, in the expectation's terms. */
function readBack(row: SourceRow) {
  return {
    where: row.where,
    name: row.facts.name,
    readableId: row.facts.readableId,
    values: Object.fromEntries([...row.values].map(([name, cell]) => [name, cellShape(cell)])),
    problems: row.problems,
  };
}

/** What the reader should give of the `number`th object of its type. */
function expectedBack(object: ExpectedObject, number: number) {
  const foreignId = object.values['ReqIF.ForeignID'];
  return {
    where: `spec object ${number} (${object.identifier})`,
    name: object.name ?? undefined,
    readableId: foreignId && textOf(foreignId),
    // The type's DEFAULT-VALUEs apply to the attributes the object carries no value for.
    values: Object.fromEntries(
      Object.entries({ ...object.defaults, ...object.values })
        .filter(([name]) => !NOT_VALUES.has(name))
        .map(([name, value]) => [name, expectedShape(value)]),
    ),
    problems: [],
  };
}

/** Each embedded object's file, as the row's warnings name it. */
const embeddedFiles = (object: ExpectedObject) =>
  Object.entries(object.values).flatMap(([name, value]) =>
    (value.embedded ?? []).map(({ data }) => `${name}: embedded object ${data}`),
  );

describe.each(CORPUS)('%s', (file) => {
  const expected = expectationOf(file);
  const types = expected.specObjectTypes;

  if (FRAGMENTS.has(file)) {
    it(`holds ${expected.specObjectCount} spec object without types: the reader refuses it as a fragment`, async () => {
      expect(types).toEqual([]);
      const failure = await rowsOf(file, types, null).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ImportFileError);
      expect((failure as Error).message).toContain(
        `holds ${expected.specObjectCount} spec object but no SPEC-OBJECT-TYPE`,
      );
    });
    return;
  }

  it(`reads its ${expected.specObjectCount} spec objects`, async () => {
    let rows = 0;
    for (const type of types) rows += (await rowsOf(file, types, type)).length;
    expect(rows).toBe(expected.specObjectCount);
  });

  it.each(types.map((type) => [type ?? '(no LONG-NAME)', type] as const))(
    'type %s: each spec object in file order, with its identity, name, values and embedded files',
    async (_, type) => {
      const objects = expected.objects.filter((object) => object.type === type);
      const rows = await rowsOf(file, types, type);
      expect(rows.map((row) => row.where)).toEqual(
        objects.map((object, index) => `spec object ${index + 1} (${object.identifier})`),
      );
      rows.forEach((row, index) => {
        const object = objects[index]!;
        expect(readBack(row), object.identifier).toEqual(expectedBack(object, index + 1));
        // The identity a newer file of the source finds the record by, where the reader gives one.
        if (row.facts.sourceId !== undefined) expect(row.facts.sourceId).toBe(object.identifier);
        const warnings = row.warnings ?? [];
        const files = embeddedFiles(object);
        expect(warnings).toHaveLength(files.length);
        files.forEach((named, i) => expect(warnings[i]).toContain(named));
      });
    },
  );

  const withDefaults = expected.objects.filter((object) => Object.keys(object.defaults).length > 0);
  if (withDefaults.length > 0)
    it(`${withDefaults.length} objects take their type's DEFAULT-VALUEs`, async () => {
      for (const type of types) {
        const objects = expected.objects.filter((object) => object.type === type);
        (await rowsOf(file, types, type)).forEach((row, index) => {
          for (const [name, value] of Object.entries(objects[index]!.defaults))
            expect(row.values.get(name) && cellShape(row.values.get(name)!), name).toEqual(
              expectedShape(value),
            );
        });
      }
    });

  if (expected.relations.length > 0)
    it(`relations: its ${expected.relations.length} SPEC-RELATION(s) by source, target and type`, async () => {
      const relations: SpecRelation[] = [];
      for await (const relation of readSpecRelations(join(fixtures, file))) relations.push(relation);
      expect(
        relations.map(({ source, target, type }, index) => ({
          source: source || null,
          target: target || null,
          // A type the file does not declare has no LONG-NAME: the reader names it by its reference.
          type: expected.relations[index]?.type === null ? null : type || null,
        })),
      ).toEqual(expected.relations);
    });
  if (expected.specifications.length > 0)
    it(`hierarchy: the objects of its ${expected.specifications.length} SPECIFICATION(s) in depth-first order, each at its level`, async () => {
      const specifications: SpecHierarchy[] = [];
      for await (const specification of readSpecHierarchies(join(fixtures, file)))
        specifications.push(specification);
      expect(
        specifications.map(({ identifier, longName, entries }) => ({
          identifier,
          name: longName ?? null,
          hierarchy: entries,
        })),
      ).toEqual(expected.specifications);
    });
});

it('every row carries its spec object IDENTIFIER as facts.sourceId', async () => {
  for (const file of CORPUS.filter((f) => !FRAGMENTS.has(f))) {
    const { objects, specObjectTypes: types } = expectationOf(file);
    for (const type of types) {
      const ids = objects.filter((object) => object.type === type).map((object) => object.identifier);
      expect(
        (await rowsOf(file, types, type)).map((row) => row.facts.sourceId),
        file,
      ).toEqual(ids);
    }
  }
});

/** Why the library cannot run here (no python3, or no lxml), or undefined when it can. */
function missingLibrary(): string | undefined {
  const run = spawnSync(PYTHON, ['-B', '-c', 'import lxml.etree'], { encoding: 'utf8' });
  if (run.error) return `${PYTHON} is not installed: install the Debian packages python3 and python3-lxml.`;
  return run.status === 0 ? undefined : `Python's lxml is missing: install the Debian package python3-lxml.`;
}
const missing = missingLibrary();
const scratch = scratchDir();
afterAll(() => scratch.dispose());

describe.skipIf(shouldSkip(missing))('the expectations', () => {
  const generated = CORPUS.filter((file) => !expectationOf(file).readBy.startsWith('hand-written'));

  it("are what support/reqif-expected.py reads from the files with StrictDoc's library", () => {
    expect(missing).toBeUndefined();
    const run = spawnSync(
      PYTHON,
      ['-B', SCRIPT, '--write', scratch.path, ...generated.map((file) => join(fixtures, file))],
      { encoding: 'utf8', env: { ...process.env, PYTHONPATH: VENDORED, PYTHONDONTWRITEBYTECODE: '1' } },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    for (const file of generated)
      expect(readFileSync(join(scratch.path, `${file}.json`), 'utf8'), file).toBe(
        readFileSync(join(fixtures, 'expected', `${file}.json`), 'utf8'),
      );
  });
});
