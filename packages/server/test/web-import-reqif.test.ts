import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeZip } from '../../exchange/test/support/bounded-uploads.js';
import {
  billionLaughs,
  externalEntity,
  reqifzBomb,
  writeChunks,
} from '../../exchange/test/support/hostile-reqif.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../../exchange/test/fixtures/reqif/${name}`, import.meta.url));

/** The settings this suite sets, restored after it. */
const SETTINGS = { RXS_WEB_IMPORT_UNZIPPED_MB: '8' } as const;

interface Listed {
  _id: string;
  name: string;
  data: Record<string, unknown>;
  context: { global_element_id?: string | null };
}

/**
 * The web app's import of ReqIF files (.reqif) and ReqIF archives (.reqifz), as `rxs import`
 * reads them: checked, then imported with their relations as traces; a file of several spec
 * object types (an archive of several .reqif files) answered with the names to choose among; a
 * file of another kind than its name says refused with 415, a hostile one with the reader's 4xx.
 */
describe('web app import: ReqIF files and archives', () => {
  let t: TestServer;
  let editor: WebClient;
  const saved = Object.fromEntries(Object.keys(SETTINGS).map((name) => [name, process.env[name]]));
  const dir = mkdtempSync(join(tmpdir(), 'rxs-web-import-reqif-'));

  /** Sends a file as the page does: its bytes as the body, its name and the options in the query. */
  const upload = async (step: 'check' | 'import', query: Record<string, string>, body: BodyInit) => {
    const response = await fetch(
      `${t.url}/api/import${step === 'check' ? '/check' : ''}?${new URLSearchParams(query)}`,
      {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/octet-stream',
          cookie: editor.cookie!,
          'x-csrf-token': editor.csrfToken!,
        },
        body,
      },
    );
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
  };
  const recordsOf = async (revision: string) =>
    (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body as Listed[];
  /** The traces between the records, as "source readable name -relation-> target name", sorted. */
  const tracesOf = async (records: Listed[]) => {
    const names = new Map(records.map((record) => [record._id, record.name]));
    const listed = await t.api('POST', '/traces/batch/list', {
      body: { nodes: records.map((record) => ({ node_id: record._id, node_type: 'Record' })) },
    });
    expect(listed.status, listed.text).toBe(200);
    const edges = new Map<string, string>();
    for (const result of Object.values(
      listed.body.results as Record<string, { edges: { _id: string; source: string; target: string }[] }>,
    ))
      for (const edge of result.edges)
        edges.set(edge._id, `${names.get(edge.source)} -> ${names.get(edge.target)}`);
    return [...edges.values()].sort();
  };

  beforeAll(async () => {
    Object.assign(process.env, SETTINGS);
    t = await startTestServer();
    editor = webClient(t.url);
    const users = t.demo.tenant.users;
    expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('checks and imports a ReqIF file of another tool: attributes as columns, IDENTIFIERs as source ids, relations as traces, once', async () => {
    const revision = await approvedTopic(t, 'Traceability template');
    const name = 'fmstudio-traceability-template.reqif';
    const file = fixture(name);
    const checked = await upload('check', { revision, name }, file);
    expect(checked.status, checked.text).toBe(200);
    expect(checked.body.file).toEqual({ name, size: file.length, format: 'reqif' });
    const { report } = checked.body;
    expect(report).toMatchObject({ dryRun: true, rows: 21, planned: { created: 21 }, problems: [] });
    expect(report.columns).toContainEqual({ column: 'ReqIF.Text', as: 'ignored' });
    expect(report.notes.join('\n')).toContain('choose its field in the column mapping');
    expect(report.preview[0]).toMatchObject({ name: 'Stakeholder Requirements', readableId: 'REQ-1' });
    // A check creates no records: the relations between records it would create are skipped.
    expect(checked.body.relations).toMatchObject({ relations: 9, created: 0, skipped: 9 });

    const renames = JSON.stringify({ 'ReqIF.Text': 'note' });
    const imported = await upload('import', { revision, name, renames }, file);
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.report).toMatchObject({ created: 21, complete: true, wrote: true });
    expect(imported.body.relations).toMatchObject({ relations: 9, created: 9, existing: 0, skipped: 0 });
    const records = await recordsOf(revision);
    expect(records).toHaveLength(21);
    // The key column by default: each spec object's IDENTIFIER is its record's source id.
    const first = records.find((record) => record.name === 'Stakeholder Requirements')!;
    expect(first.context.global_element_id).toBe('_o7scQ6dbEeafNduaIhMwQg');
    expect(records.some((record) => String(record.data.note).startsWith('This is a simple template'))).toBe(
      true,
    );
    expect(await tracesOf(records)).toHaveLength(9);

    const again = await upload('import', { revision, name, renames }, file);
    expect(again.body.report).toMatchObject({ created: 0, updated: 0, unchanged: 21 });
    expect(again.body.relations).toMatchObject({ relations: 9, created: 0, existing: 9 });
    expect(await tracesOf(records)).toHaveLength(9);
  });

  it('answers a file of several spec object types with their names to choose among; the chosen one imports', async () => {
    const revision = await approvedTopic(t, 'Polarion requirements');
    const name = 'polarion-roundtrip.reqif';
    const types = await upload('check', { revision, name }, fixture(name));
    expect(types.status, types.text).toBe(422);
    expect(types.body.choose).toEqual({
      option: 'spec_type',
      names: ['Heading', 'System Requirement'],
      more: 0,
    });
    expect(types.body.detail).toContain(`"${name}" has 2 spec object types`);
    expect(types.body.detail).toContain('Choose the spec object type to import and check again.');
    expect(types.text).not.toContain('--spec-type');

    // Its attributes are columns like a sheet's: one the form lacks is mapped, or left out.
    const chosen = await upload(
      'import',
      { revision, name, spec_type: 'System Requirement', renames: JSON.stringify({ Status: '' }) },
      fixture(name),
    );
    expect(chosen.status, chosen.text).toBe(200);
    expect(chosen.body.report, chosen.text).toMatchObject({ rows: 1, created: 1, complete: true });
    expect(await recordsOf(revision)).toHaveLength(1);

    const unknown = await upload('check', { revision, name, spec_type: 'Test Case' }, fixture(name));
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toContain('none is named "Test Case"');
    expect(unknown.body.choose.names).toEqual(['Heading', 'System Requirement']);
  });

  it('imports a ReqIF archive: its one .reqif file, or the one chosen among several', async () => {
    const revision = await approvedTopic(t, 'DOORS module');
    const name = 'doors-spielwiese.reqifz';
    const unmapped = await upload('check', { revision, name }, fixture(name));
    expect(unmapped.status, unmapped.text).toBe(200);
    expect(unmapped.body.report.problems.join('\n')).toContain(
      'Column "Kommentar Lieferant 01" names no field of "DOORS module"',
    );
    expect(unmapped.body.report.columns).toContainEqual({ column: 'Kommentar Lieferant 01', as: 'unknown' });
    const renames = JSON.stringify({ 'Kommentar Lieferant 01': 'note' });
    const checked = await upload('check', { revision, name, renames }, fixture(name));
    expect(checked.status, checked.text).toBe(200);
    expect(checked.body.file.format).toBe('reqif');
    expect(checked.body.report, checked.text).toMatchObject({
      rows: 4,
      planned: { created: 4 },
      problems: [],
    });
    expect(checked.body.report.notes.join('\n')).toContain(
      `"${name}" holds 2 files besides _Spielwiese.reqif`,
    );
    expect(checked.text).not.toContain('rxs-web-import-');

    const archive = join(dir, 'two.reqifz');
    const entry = (file: string) => ({ name: `module/${file}`, chunks: () => [fixture(file)] });
    await writeZip(archive, [entry('rmf-tc1000-simple-content.reqif'), entry('strictdoc.reqif')]);
    const several = await upload('check', { revision, name: 'two.reqifz' }, readFileSync(archive));
    expect(several.status, several.text).toBe(422);
    expect(several.body.choose).toEqual({
      option: 'entry',
      names: ['module/rmf-tc1000-simple-content.reqif', 'module/strictdoc.reqif'],
      more: 0,
    });
    expect(several.body.detail).toContain('Choose the ReqIF file of the archive to import and check again.');
    const chosen = await upload(
      'check',
      { revision, name: 'two.reqifz', entry: 'module/strictdoc.reqif' },
      readFileSync(archive),
    );
    expect(chosen.status, chosen.text).toBe(200);
    expect(chosen.body.report.rows).toBe(18);
  });

  it('answers hostile files with the reader’s 4xx, never a 500, and never the text an entity names', async () => {
    const revision = await approvedTopic(t, 'Hostile ReqIF');
    const secretFile = join(dir, 'secret.txt');
    const secret = `RXS-SECRET-${randomBytes(8).toString('hex')}`;
    writeFileSync(secretFile, secret);
    const files = {
      xxe: join(dir, 'xxe.reqif'),
      laughs: join(dir, 'laughs.reqif'),
      bomb: join(dir, 'bomb.reqifz'),
    };
    await writeChunks(files.xxe, externalEntity(`file://${secretFile}`));
    await writeChunks(files.laughs, billionLaughs());
    // 20 MB of XML in some 20 KB; the limit is 8 MB here.
    await reqifzBomb(files.bomb, 20 * 1024 * 1024);
    for (const [name, file] of [
      ['xxe.reqif', files.xxe],
      ['laughs.reqif', files.laughs],
      ['xxe.reqifz', await zipOf(files.xxe)],
    ] as const) {
      const answer = await upload('check', { revision, name }, readFileSync(file));
      expect(answer.status, answer.text).toBe(422);
      expect(answer.body.detail).toContain(`declares a DOCTYPE (<!DOCTYPE …>): RXS reads no DTD`);
      expect(answer.body.detail).toContain('Nothing was written');
      expect(answer.text).not.toContain(secret);
    }
    const bomb = await upload('check', { revision, name: 'bomb.reqifz' }, readFileSync(files.bomb));
    expect(bomb.status, bomb.text).toBe(422);
    expect(bomb.body.detail).toContain('The ReqIF archive "bomb.reqifz" unpacks to more than 8 MiB');
    expect(bomb.body.detail).toContain('RXS_WEB_IMPORT_UNZIPPED_MB');
    expect((await t.api('GET', '/healthz', { key: null })).status).toBe(200);
    expect(await recordsOf(revision)).toHaveLength(0);
  });

  /** A ReqIF archive of the file. */
  const zipOf = async (file: string) => {
    const archive = `${file}z`;
    await writeZip(archive, [{ name: 'inner.reqif', chunks: () => [readFileSync(file)] }]);
    return archive;
  };

  it('refuses a file of another kind than its name says with 415, before reading it', async () => {
    const revision = await approvedTopic(t, 'ReqIF kinds');
    const xml = fixture('rmf-tc1000-simple-content.reqif');
    const zip = fixture('doors-spielwiese.reqifz');
    const refusals: [string, BodyInit, string][] = [
      [
        'zipped.reqif',
        zip,
        'is not a ReqIF file (XML text), as its name says: it is a zip archive. A ReqIF archive is named .reqifz',
      ],
      [
        'scan.reqif',
        '%PDF-1.7 ...',
        'is not a ReqIF file (XML text), as its name says: it is a PDF document.',
      ],
      ['table.reqif', 'name,Note\r\nN-1,x\r\n', 'it does not start as XML does.'],
      [
        'plain.reqifz',
        xml,
        'is not a ReqIF archive (a zip archive of .reqif files), as its name says: it is XML text.',
      ],
      [
        'records.json',
        '[]',
        'is not a file the import page takes: CSV (.csv, .tsv, .txt), XLSX (.xlsx), ReqIF (.reqif, .xml) or a ReqIF archive (.reqifz).',
      ],
    ];
    for (const [name, body, message] of refusals) {
      const answer = await upload('check', { revision, name }, body);
      expect(answer.status, `${name}: ${answer.text}`).toBe(415);
      expect(answer.body.detail).toContain(`"${name}" `);
      expect(answer.body.detail).toContain(message);
    }
    // XML in UTF-16 with its byte order mark, and XML without a declaration after white space, are XML all the same.
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(
        xml.toString('utf8').replace(/^<\?xml[^>]*>/, '<?xml version="1.0" encoding="UTF-16"?>'),
        'utf16le',
      ),
    ]);
    for (const [name, body] of [
      ['utf16.reqif', utf16],
      ['spaced.reqif', `${'\n'.repeat(100)}${xml.toString('utf8').replace(/^<\?xml[^>]*>/, '')}`],
    ] as const) {
      const answer = await upload('check', { revision, name }, body);
      expect(answer.status, `${name}: ${answer.text}`).toBe(200);
      expect(answer.body.report.rows, name).toBe(1);
    }
  });

  it('answers another tenant’s revision as not found, before reading the file', async () => {
    const foreign = Object.values(t.demo.otherTenant.topics)[0]!.currentRevisionId;
    const name = 'fmstudio-traceability-template.reqif';
    const answer = await upload('import', { revision: foreign, name }, fixture(name));
    expect(answer.status, answer.text).toBe(404);
  });
});
