import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxsClient } from '@rxs/client';
import { importRecords, openRowSource, type ImportOptions } from '@rxs/exchange';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, createNoteRecord } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * Source identity: every import keeps each row's identity in its source with the record it creates
 * (`context.global_element_id`: a ReqIF SPEC-OBJECT's IDENTIFIER, a CSV's key column), so that a
 * newer file of the same source updates what changed, leaves the rest, reports (and on request
 * removes) what the source no longer has, and never creates a record twice.
 */
const fixture = (name: string) =>
  readFileSync(new URL(`../../exchange/test/fixtures/reqif/${name}`, import.meta.url), 'utf8');

/** Enterprise Architect's sample: functional requirements R001 and R002 (and R003 of another type). */
const EA_V1 = fixture('enterprise-architect-8.reqif');
const EA_OPTIONS = {
  source: { specType: 'Functional Requirement' },
  renames: new Map([
    ['FUNC-REQ-TXT', 'Description'],
    ['FUNC-REQ-STATUS', 'Status'],
  ]),
};
const EA_SCHEMA = {
  components: [
    { type: 'textarea', key: 'description', label: 'Description' },
    {
      type: 'select',
      key: 'status',
      label: 'Status',
      values: ['Proposed', 'Accepted', 'Rejected', 'Implemented', 'Approved'].map((label) => ({
        label,
        value: label.toLowerCase(),
      })),
    },
  ],
};

/** The spec object of `identifier` in a ReqIF text, whole. */
function specObject(text: string, identifier: string): string {
  const start = text.lastIndexOf('<SPEC-OBJECT ', text.indexOf(`IDENTIFIER="${identifier}"`));
  const end = text.indexOf('</SPEC-OBJECT>', start) + '</SPEC-OBJECT>'.length;
  return text.slice(start, end);
}

/** The next version of the file, as EA would write it: R001 reworded, R002 gone, R004 new. */
function eaVersion2(): string {
  const r001 = specObject(EA_V1, 'R001');
  const r004 = r001
    .replace('IDENTIFIER="R001"', 'IDENTIFIER="R004"')
    .replace('LONG-NAME="Observe earths surface."', 'LONG-NAME="Report smoke"')
    .replace('The system shall observe the earths surface.', 'The system shall report smoke.');
  const reworded = r001.replace(
    'The system shall observe the earths surface.',
    'The system shall observe the earths surface by day and night.',
  );
  return EA_V1.replace(specObject(EA_V1, 'R002'), r004).replace(r001, reworded);
}

describe('source identity', () => {
  let t: TestServer;
  let client: RxsClient;
  let dir: string;
  const records = async (revision: string) =>
    (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body as {
      _id: string;
      name: string;
      version: string;
      data: Record<string, unknown>;
      context: Record<string, unknown>;
    }[];
  const bySourceId = async (revision: string) =>
    new Map((await records(revision)).map((record) => [record.context.global_element_id, record]));
  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const importFile = (
    revision: string,
    file: string,
    options: Partial<ImportOptions> & { source?: Parameters<typeof openRowSource>[1] } = {},
  ) => importRecords(client, openRowSource(file, options.source), { revisionId: revision, ...options });

  beforeAll(async () => {
    t = await startTestServer();
    client = createClient({ techdocUrl: t.url, recordsUrl: t.url, tracerUrl: t.url, apiKey: t.ownerKey });
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-identity-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a ReqIF file imported twice changes nothing; its newer version updates, creates and reports exactly what changed', async () => {
    const revision = await approvedTopic(t, 'EA requirements', { schema: EA_SCHEMA });
    const v1 = write('ea-v1.reqif', EA_V1);
    const first = await importFile(revision, v1, EA_OPTIONS);
    expect(first.rowProblems).toEqual([]);
    expect(first).toMatchObject({ created: 2, updated: 0, unchanged: 0, missing: 0, complete: true });
    const before = await bySourceId(revision);
    expect([...before.keys()].sort()).toEqual(['R001', 'R002']);

    const again = await importFile(revision, v1, EA_OPTIONS);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 2, missing: 0, wrote: false });
    expect(await records(revision)).toHaveLength(2);

    const v2 = write('ea-v2.reqif', eaVersion2());
    const dryRun = await importFile(revision, v2, { ...EA_OPTIONS, dryRun: true, removeMissing: true });
    expect(dryRun).toMatchObject({
      created: 1,
      updated: 1,
      unchanged: 0,
      missing: 1,
      removed: 1,
      wrote: false,
    });
    expect(dryRun.notes.join('\n')).toContain('"Spotting fire" (R002)');
    expect(await records(revision)).toHaveLength(2);

    const newer = await importFile(revision, v2, EA_OPTIONS);
    expect(newer.rowProblems).toEqual([]);
    expect(newer).toMatchObject({
      created: 1,
      updated: 1,
      unchanged: 0,
      missing: 1,
      removed: 0,
      complete: true,
    });
    expect(newer.notes.join('\n')).toMatch(
      /1 record of "EA requirements" has a source id the file no longer has: "Spotting fire" \(R002\)\. It is kept; delete it with --remove-missing\./,
    );
    const after = await bySourceId(revision);
    expect([...after.keys()].sort()).toEqual(['R001', 'R002', 'R004']);
    // R001 is the same record, changed; R002 is as it was; R004 is new.
    expect(after.get('R001')).toMatchObject({
      _id: before.get('R001')!._id,
      version: '2.0',
      data: { description: 'The system shall observe the earths surface by day and night.' },
    });
    expect(after.get('R002')).toEqual(before.get('R002'));
    expect(after.get('R004')).toMatchObject({ name: 'Report smoke', version: '1.0' });

    const removing = await importFile(revision, v2, { ...EA_OPTIONS, removeMissing: true });
    expect(removing).toMatchObject({
      created: 0,
      updated: 0,
      unchanged: 2,
      missing: 1,
      removed: 1,
      complete: true,
    });
    expect([...(await bySourceId(revision)).keys()].sort()).toEqual(['R001', 'R004']);
    const history = await t.api('GET', `/records/${before.get('R002')!._id}/versions`);
    expect(history.body[0]).toMatchObject({
      action: 'deleted',
      reason: 'Its source id "R002" is no longer in the imported file.',
    });
    expect(await importFile(revision, v2, { ...EA_OPTIONS, removeMissing: true })).toMatchObject({
      unchanged: 2,
      missing: 0,
      removed: 0,
    });
  });

  it('removes nothing when the import is refused or a row is rejected', async () => {
    const revision = await approvedTopic(t, 'Kept while refused');
    const v1 = write('kept-v1.csv', 'source_id,name,Note\r\nA-1,alpha,one\r\nA-2,beta,two\r\n');
    expect(await importFile(revision, v1)).toMatchObject({ created: 2, complete: true });
    // A-2 is gone, and A-1 is in the file twice: refused, all or nothing.
    const twice = write('kept-twice.csv', 'source_id,name,Note\r\nA-1,alpha,one\r\nA-1,alpha again,one\r\n');
    const refused = await importFile(revision, twice, { removeMissing: true });
    expect(refused).toMatchObject({ rejected: 2, missing: 1, removed: 0, wrote: false, complete: false });
    expect(refused.rowProblems[0]!.problems).toContain(
      'the file has this record more than once (source id A-1 is in 2 rows): keep one of the rows.',
    );
    expect(refused.notes.join('\n')).toContain('It is kept: not every row was written.');
    expect(await records(revision)).toHaveLength(2);
  });

  it('a CSV with a key column imported twice never duplicates; its key fills a field only if it names one', async () => {
    const revision = await approvedTopic(t, 'Issues by key');
    const file = write(
      'issues.csv',
      'Issue key,name,Note\r\nPROJ-1,first issue,one\r\nPROJ-2,second issue,two\r\n',
    );
    const first = await importFile(revision, file, { keyColumn: 'Issue key' });
    expect(first).toMatchObject({ created: 2, complete: true });
    expect(first.columns.find((c) => c.column === 'Issue key')).toEqual({
      column: 'Issue key',
      as: 'ignored',
    });
    expect(first.notes).toContain(
      "Issue key: the key column, each row's identity in its source (the record's source id).",
    );
    // Renamed rows are the same issues: updated, not created anew.
    const renamed = write(
      'issues-2.csv',
      'Issue key,name,Note\r\nPROJ-2,second issue,two\r\nPROJ-1,first issue renamed,one\r\n',
    );
    expect(await importFile(revision, renamed, { keyColumn: 'Issue key' })).toMatchObject({
      created: 0,
      updated: 1,
      unchanged: 1,
    });
    expect(await importFile(revision, renamed, { keyColumn: 'Issue key' })).toMatchObject({
      created: 0,
      updated: 0,
      unchanged: 2,
    });
    const listed = await records(revision);
    expect(listed.map((r) => [r.context.global_element_id, r.name]).sort()).toEqual([
      ['PROJ-1', 'first issue renamed'],
      ['PROJ-2', 'second issue'],
    ]);

    // The key column may be a field: it fills it, and is the identity too.
    const byNote = await importFile(revision, renamed, { keyColumn: 'Note', dryRun: true });
    expect(byNote.notes).toContain(
      `Note: the key column, each row's identity in its source (the record's source id); it also fills "Note".`,
    );
    // A key column no row has a value in stops the import before anything is read from the topic.
    const none = await importFile(revision, renamed, { keyColumn: 'Issue', ignoreUnknownColumns: true });
    expect(none.problems[0]).toMatch(/^No row has a value in the key column "Issue"/);
  });

  it("a row's _id and source id must name the same record", async () => {
    const revision = await approvedTopic(t, 'Consistent ids');
    const file = write('ids.csv', 'source_id,name,Note\r\nX-1,one,1\r\nX-2,two,2\r\n');
    await importFile(revision, file);
    const ids = await bySourceId(revision);
    const one = ids.get('X-1')!;
    const edited = write(
      'ids-edited.csv',
      `_id,source_id,name,version,Note\r\n${one._id},X-2,one,${one.version},changed\r\n`,
    );
    const report = await importFile(revision, edited);
    expect(report.rejected).toBe(1);
    expect(report.rowProblems[0]!.problems[0]).toBe(
      `its _id is record ${one._id}, whose source id is "X-1", not this row's "X-2": clear the _id to match the row by its source id, or correct the source id.`,
    );
    // The same row with its own source id updates the record.
    const consistent = write(
      'ids-consistent.csv',
      `_id,source_id,name,version,Note\r\n${one._id},X-1,one,${one.version},changed\r\n`,
    );
    expect(await importFile(revision, consistent)).toMatchObject({ updated: 1, missing: 1, complete: true });
  });

  it('a record imported before source ids were kept is found by its readable id, as it was then', async () => {
    const revision = await approvedTopic(t, 'Imported before');
    const legacy = await createNoteRecord(t, revision, 'LEGACY_1');
    const file = write('legacy.csv', 'source_id,name,Note\r\nS-1,LEGACY_1,changed\r\nS-2,NEW_2,new\r\n');
    expect(await importFile(revision, file)).toMatchObject({ created: 1, updated: 1, complete: true });
    expect(await importFile(revision, file)).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
    const listed = await records(revision);
    expect(listed).toHaveLength(2);
    expect(listed.find((r) => r._id === legacy._id)).toMatchObject({ data: { note: 'changed' } });
  });

  it('GET /records/ and /records/count filter by context__global_element_id, exactly, within the tenant', async () => {
    const revision = await approvedTopic(t, 'Filtered by source id');
    const other = await approvedTopic(t, 'Another topic');
    const create = (rev: string, sourceId: string | undefined, key?: string) =>
      t.api('POST', '/records/', {
        ...(key && { key }),
        body: {
          name: `from ${sourceId ?? 'nowhere'}`,
          form: {},
          data: {},
          context: {
            knowledge_unit_topic_id: rev,
            ...(sourceId !== undefined && { global_element_id: sourceId }),
          },
        },
      });
    // Kept verbatim: spaces, case, slashes and non-ASCII.
    const odd = '  DOORS:Modul/ä 17  ';
    const created = await create(revision, odd);
    expect(created.status, created.text).toBe(201);
    expect(created.body.context.global_element_id).toBe(odd);
    expect((await create(revision, 'SHARED')).status).toBe(201);
    expect((await create(other, 'SHARED')).status).toBe(201);
    await createNoteRecord(t, revision, 'no source id');
    const foreign = t.demo.otherTenant;
    const foreignKey = foreign.users.owner.apiKey;
    const foreignTopic = await approvedTopic(t, 'Theirs', { key: foreignKey });
    const foreignCreate = await create(foreignTopic, 'SHARED', foreignKey);
    expect(foreignCreate.status, foreignCreate.text).toBe(201);

    const list = async (query: string) =>
      ((await t.api('GET', `/records/?${query}`)).body as { context: Record<string, unknown> }[]).map(
        (record) => [record.context.knowledge_unit_topic_id, record.context.global_element_id],
      );
    expect(await list(`context__global_element_id=${encodeURIComponent(odd)}`)).toEqual([[revision, odd]]);
    expect(await list(`context__global_element_id=${encodeURIComponent(odd.trim())}`)).toEqual([]);
    expect(await list('context__global_element_id=shared')).toEqual([]);
    expect((await list('context__global_element_id=SHARED')).sort()).toEqual(
      [
        [revision, 'SHARED'],
        [other, 'SHARED'],
      ].sort(),
    );
    expect(
      await list(`context__global_element_id=SHARED&context__knowledge_unit_topic_id=${revision}`),
    ).toEqual([[revision, 'SHARED']]);
    expect(await list('context__global_element_id=SHARED&limit=1')).toHaveLength(1);
    const count = await t.api('GET', `/records/count?context__global_element_id=SHARED`);
    expect(count.body).toEqual({ count: 2 });
    // The other tenant sees its own record only.
    const theirs = await t.api('GET', '/records/?context__global_element_id=SHARED', { key: foreignKey });
    expect(theirs.body.map((r: { _id: string }) => r._id)).toEqual([foreignCreate.body._id]);
    // A filtered listing has its own ETag: not the topic's whole listing's.
    const whole = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    const filtered = await t.api(
      'GET',
      `/records/?context__knowledge_unit_topic_id=${revision}&context__global_element_id=SHARED`,
    );
    expect(filtered.headers.get('etag')).toBeDefined();
    expect(filtered.headers.get('etag')).not.toBe(whole.headers.get('etag'));
    // The records as they were: the filter applies to history too.
    const asOf = await t.api(
      'GET',
      `/records/?context__global_element_id=SHARED&as_of=${encodeURIComponent(new Date().toISOString())}`,
    );
    expect(asOf.body).toHaveLength(2);
  });

  describe('the web import', () => {
    let editor: WebClient;
    const upload = async (step: 'check' | 'import', query: Record<string, string>, body: string) => {
      const response = await fetch(
        `${t.url}/api/import${step === 'check' ? '/check' : ''}?${new URLSearchParams(query)}`,
        {
          method: 'POST',
          headers: {
            accept: 'application/json',
            'content-type': 'application/octet-stream',
            cookie: editor.cookie!,
            ...(editor.csrfToken && { 'x-csrf-token': editor.csrfToken }),
          },
          body,
        },
      );
      const text = await response.text();
      expect(response.status, text).toBe(200);
      return JSON.parse(text).report;
    };

    beforeAll(async () => {
      editor = webClient(t.url);
      const { email, password } = t.demo.tenant.users.editor;
      expect((await editor.signIn(email, password)).status).toBe(200);
    });

    it('takes a key column and removes the records no longer in the file when asked', async () => {
      const revision = await approvedTopic(t, 'Web import by key');
      const v1 = 'Ticket,name,Note\r\nT-1,one,first\r\nT-2,two,second\r\nT-3,three,third\r\n';
      const query = { revision, name: 'tickets.csv', key_column: 'Ticket' };
      expect(await upload('check', query, v1)).toMatchObject({ created: 3, dryRun: true });
      expect(await upload('import', query, v1)).toMatchObject({ created: 3, complete: true });
      expect(await upload('import', query, v1)).toMatchObject({ created: 0, unchanged: 3, wrote: false });

      const v2 = 'Ticket,name,Note\r\nT-1,one,first\r\nT-3,three,third edited\r\n';
      const removing = { ...query, remove_missing: 'true' };
      const checked = await upload('check', removing, v2);
      expect(checked).toMatchObject({ updated: 1, unchanged: 1, missing: 1, removed: 1 });
      expect(checked.notes.join('\n')).toContain('"two" (T-2)');
      expect(await records(revision)).toHaveLength(3);
      expect(await upload('import', removing, v2)).toMatchObject({
        updated: 1,
        missing: 1,
        removed: 1,
        complete: true,
      });
      expect([...(await bySourceId(revision)).keys()].sort()).toEqual(['T-1', 'T-3']);
      // Without the option, a record no longer in the file is named and kept, in the page's words.
      const kept = await upload('check', query, 'Ticket,name,Note\r\nT-1,one,first\r\n');
      expect(kept.notes.join('\n')).toContain(
        'It is kept; delete it with “Remove records no longer in the file”.',
      );
    });
  });
});
