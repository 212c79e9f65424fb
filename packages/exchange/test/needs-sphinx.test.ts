import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { exportMappingFromText, MappingFileError } from '../src/export/mapping-file.js';
import type { ExportPart } from '../src/export/model.js';
import { exportParts } from '../src/export/procedure.js';
import { createWriter, writeExport } from '../src/export/writers/index.js';
import { sphinxDocnameMistake } from '../src/export/writers/needs.js';
import { missingSphinx, sphinxBuild } from './support/sphinx.js';
import { referenceSource, scratchDir, shouldSkip } from './support/spreadsheet-readers.js';

/**
 * The Sphinx-Needs export loaded by Sphinx-Needs itself (vendored in vendor/sphinx-needs, see its
 * SOURCES.md) under Debian's Sphinx, both ways, each project built with `sphinx-build -W` (a
 * warning fails the build):
 * - `needimport`: a publishing project imports the needs.json on the page its docname names;
 * - `needs_external_needs`: a consuming project loads the same file and links to those needs.
 *   Every link goes to `<base_url>/<docname>.html#<id>` (never `__error__`), and that page of the
 *   publishing project's build holds the need with that id: the links work once it is published
 *   at base_url.
 */

const scratch = scratchDir();
afterAll(() => scratch.dispose());

const missing = missingSphinx();

const DOCNAME = 'requirements/system';
const BASE_URL = 'https://docs.example.com/reqs';
const MAPPING = JSON.stringify({ topics: [{ name: 'System Requirements', docname: DOCNAME }] });

interface NeedsJson {
  current_version: string;
  versions: Record<
    string,
    {
      needs_schema: { properties: Record<string, { field_type?: string }> };
      needs: Record<string, Record<string, unknown>>;
    }
  >;
}

/** The reference sample with its traces, exported as needs.json with a mapping file's text. */
async function needsFile(file: string, mapping?: string, docname?: string): Promise<NeedsJson> {
  const { source, revisionIds } = referenceSource();
  const parts: ExportPart[] = [];
  for await (const part of exportParts(source, {
    revisionIds,
    traces: true,
    mapping: mapping === undefined ? undefined : exportMappingFromText(mapping),
    now: () => new Date('2026-08-11T09:30:00.000Z'),
  }))
    parts.push(part);
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await writeExport(createWriter('needs', out, { needs: { docname } }), parts);
  const text = Buffer.concat(chunks).toString('utf8');
  writeFileSync(file, text);
  return JSON.parse(text) as NeedsJson;
}

const needsOf = (doc: NeedsJson) => doc.versions[doc.current_version]!.needs;

/** conf.py lines that declare the file's extra options and link types from its needs_schema (docs). */
const DECLARE_FROM_SCHEMA = `
import json
_needs = json.load(open("needs.json", encoding="utf-8"))
_fields = _needs["versions"][_needs["current_version"]]["needs_schema"]["properties"]
needs_extra_options = [name for name, f in _fields.items() if f.get("field_type") == "extra"]
needs_extra_links = [
    {"option": name, "incoming": f["incoming"], "outgoing": name}
    for name, f in _fields.items()
    if f.get("field_type") == "links" and name != "links"
]
`;

/** The project that publishes the needs: `needimport` on the page the docname names. */
function publish(dir: string, needsJson: string) {
  return sphinxBuild(dir, {
    'conf.py': `project = "Publisher"\nextensions = ["sphinx_needs"]\n${DECLARE_FROM_SCHEMA}`,
    'needs.json': needsJson,
    'index.rst': 'Publisher\n=========\n\n.. toctree::\n\n   requirements/system\n',
    [`${DOCNAME}.rst`]:
      'System requirements\n===================\n\n.. needimport:: /needs.json\n   :tags: rxs\n',
  });
}

/** The project that links to them: `needs_external_needs` with base_url, json_path, id_prefix, css_class. */
function consume(dir: string, needsJson: string) {
  const conf = `project = "Consumer"
extensions = ["sphinx_needs"]
${DECLARE_FROM_SCHEMA}
needs_external_needs = [
    {"base_url": "${BASE_URL}/", "json_path": "needs.json", "id_prefix": "EXT_", "css_class": "rxs-external"},
]
`;
  const index = `Consumer
========

.. req:: Uses the system requirements
   :id: LOC_001
   :links: EXT_REQ_001, EXT_REQ_002

The temperature range: :need:\`EXT_REQ_001\`.

.. needtable::
   :filter: is_external
   :columns: id, title
   :style: table
`;
  return sphinxBuild(dir, { 'conf.py': conf, 'needs.json': needsJson, 'index.rst': index });
}

/** Every href of a page whose fragment is one of `ids`, in order of appearance. */
function hrefsTo(html: string, ids: string[]): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)]
    .map((match) => match[1]!.replaceAll('&amp;', '&'))
    .filter((href) => ids.includes(href.slice(href.indexOf('#') + 1)));
}

describe.skipIf(shouldSkip(missing))(
  'needs.json loaded by Sphinx-Needs (vendored 2.1.0, Debian Sphinx 5.3)',
  () => {
    it('finds Sphinx (python3-sphinx, python3-jsonschema, python3-requests-file) and the vendored Sphinx-Needs', () => {
      expect(missing).toBeUndefined();
    });

    it('needimport and needs_external_needs both build with -W; every external link is base_url/docname.html#ID and leads to the need', async () => {
      const file = join(scratch.path, 'needs.json');
      const needs = needsOf(await needsFile(file, MAPPING));
      const ids = Object.keys(needs);
      expect(ids).toEqual(['REQ_001', 'REQ_002', 'REQ_003', 'REQ_004']);
      for (const need of Object.values(needs)) expect(need.docname).toBe(DOCNAME);
      const json = readFileSync(file, 'utf8');

      const publisher = publish(join(scratch.path, 'publisher'), json);
      expect({ status: publisher.status, log: publisher.log }).toEqual({ status: 0, log: '' });
      const page = readFileSync(join(publisher.out, `${DOCNAME}.html`), 'utf8');
      for (const [id, need] of Object.entries(needs)) {
        expect(page).toContain(`id="${id}"`);
        expect(page).toContain(String(need.title));
      }

      const consumer = consume(join(scratch.path, 'consumer'), json);
      expect({ status: consumer.status, log: consumer.log }).toEqual({ status: 0, log: '' });
      const html = readFileSync(join(consumer.out, 'index.html'), 'utf8');
      expect(html).not.toContain('__error__');
      const hrefs = hrefsTo(html, ids);
      // The role, the local need's two links and the table's four rows: all to the publisher.
      expect(hrefs.length).toBeGreaterThanOrEqual(1 + 2 + ids.length);
      for (const href of hrefs) {
        const id = href.slice(href.indexOf('#') + 1);
        expect(href).toBe(`${BASE_URL}/${DOCNAME}.html#${id}`);
        // Published at BASE_URL, the publisher's page holds the need the link names.
        const published = readFileSync(
          join(publisher.out, href.slice(BASE_URL.length + 1, href.indexOf('#'))),
          'utf8',
        );
        expect(published).toContain(`id="${id}"`);
      }
      expect(new Set(hrefs.map((href) => href.slice(href.indexOf('#') + 1)))).toEqual(new Set(ids));
      // The external needs carry the css_class and the prefixed ids the project refers to them by.
      expect(html).toContain('rxs-external');
      for (const id of ids) expect(html).toContain(`EXT_${id}`);
    }, 180_000);

    it('without a docname, Sphinx-Needs links every external need to __error__.html (what the docname fixes)', async () => {
      const file = join(scratch.path, 'no-docname.json');
      const needs = needsOf(await needsFile(file));
      for (const need of Object.values(needs)) expect(need).not.toHaveProperty('docname');
      const consumer = consume(join(scratch.path, 'consumer-no-docname'), readFileSync(file, 'utf8'));
      expect({ status: consumer.status, log: consumer.log }).toEqual({ status: 0, log: '' });
      const hrefs = hrefsTo(readFileSync(join(consumer.out, 'index.html'), 'utf8'), Object.keys(needs));
      expect(hrefs.length).toBeGreaterThan(0);
      for (const href of hrefs) expect(href).toMatch(new RegExp(`^${BASE_URL}/__error__\\.html#REQ_00\\d$`));
    }, 180_000);
  },
);

describe('the docname of exported needs', () => {
  it("comes from the topic's mapping entry, and the writer's docname option overrides it for every topic", async () => {
    const mapped = await needsFile(join(scratch.path, 'mapped.json'), MAPPING);
    // The reference topic has no version: the needs are filed under the export time, never "".
    expect(mapped.current_version).toBe('2026-08-11T09:30:00.000Z');
    const version = mapped.versions[mapped.current_version]!;
    expect(Object.values(version.needs).map((need) => need.docname)).toEqual(Array(4).fill(DOCNAME));
    // Beside the need's core fields in its needs_schema, as Sphinx-Needs lists docname.
    expect(version.needs_schema.properties.docname).toMatchObject({ type: 'string', field_type: 'core' });

    const overridden = needsOf(await needsFile(join(scratch.path, 'overridden.json'), MAPPING, 'reqs'));
    expect(Object.values(overridden).map((need) => need.docname)).toEqual(Array(4).fill('reqs'));
    const unmapped = await needsFile(join(scratch.path, 'unmapped.json'));
    expect(unmapped.versions[unmapped.current_version]!.needs_schema.properties).not.toHaveProperty(
      'docname',
    );
  });

  it('is a path of URL-safe segments without file suffix: others are refused in the mapping file and by the writer', () => {
    for (const good of ['index', 'requirements/system', 'v1.2/REQ-list_all', 'a/b/c~d'])
      expect({ good, mistake: sphinxDocnameMistake(good) }).toEqual({ good, mistake: undefined });
    for (const bad of [
      '',
      '/abs',
      'trail/',
      'a//b',
      '../up',
      './here',
      '.hidden',
      'a b',
      'a#b',
      'a?b',
      'ä',
      'a\\b',
    ])
      expect({ bad, mistake: sphinxDocnameMistake(bad) }).toEqual({
        bad,
        mistake: expect.stringContaining('not a Sphinx document name'),
      });
    for (const suffixed of ['system.rst', 'system.md', 'system.html', 'docs/system.HTM'])
      expect(sphinxDocnameMistake(suffixed)).toContain('without it');

    const mistake = (() => {
      try {
        exportMappingFromText(
          JSON.stringify({ topics: [{ name: 'System Requirements', docname: 'reqs.rst' }] }),
        );
      } catch (error) {
        return error;
      }
    })();
    expect(mistake).toBeInstanceOf(MappingFileError);
    expect((mistake as MappingFileError).problems).toEqual([
      { place: 'topics[0] ("System Requirements").docname', message: expect.stringContaining('"reqs"') },
    ]);
    expect(() => createWriter('needs', new PassThrough(), { needs: { docname: 'a b' } })).toThrow(
      /docname of the needs: "a b" is not a Sphinx document name/,
    );
  });
});
