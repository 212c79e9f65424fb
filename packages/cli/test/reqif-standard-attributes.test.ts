import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/** A file as DOORS writes one: the record's name, readable id and text in ReqIF's standard attributes. */
const DOORS_REQIF = `<?xml version="1.0" encoding="UTF-8"?>
<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd">
  <CORE-CONTENT><REQ-IF-CONTENT>
    <DATATYPES><DATATYPE-DEFINITION-STRING IDENTIFIER="DT-S" MAX-LENGTH="1000"/></DATATYPES>
    <SPEC-TYPES>
      <SPEC-OBJECT-TYPE IDENTIFIER="T-REQ" LONG-NAME="Requirement"><SPEC-ATTRIBUTES>
${['ReqIF.ForeignID', 'ReqIF.Name', 'ReqIF.Text']
  .map(
    (name) =>
      `        <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="AD-${name}" LONG-NAME="${name}"><TYPE><DATATYPE-DEFINITION-STRING-REF>DT-S</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>`,
  )
  .join('\n')}
      </SPEC-ATTRIBUTES></SPEC-OBJECT-TYPE>
    </SPEC-TYPES>
    <SPEC-OBJECTS>
${[
  ['_o1', 'REQ-1', 'Start within 2 s', 'The pump starts within 2 s.'],
  ['_o2', 'REQ-2', 'Stop safely', 'The pump stops without a pressure surge.'],
]
  .map(
    ([id, foreignId, name, text]) =>
      `      <SPEC-OBJECT IDENTIFIER="${id}"><TYPE><SPEC-OBJECT-TYPE-REF>T-REQ</SPEC-OBJECT-TYPE-REF></TYPE><VALUES>
${Object.entries({ 'ReqIF.ForeignID': foreignId, 'ReqIF.Name': name, 'ReqIF.Text': text })
  .map(
    ([attribute, value]) =>
      `        <ATTRIBUTE-VALUE-STRING THE-VALUE="${value}"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>AD-${attribute}</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>`,
  )
  .join('\n')}
      </VALUES></SPEC-OBJECT>`,
  )
  .join('\n')}
    </SPEC-OBJECTS>
  </REQ-IF-CONTENT></CORE-CONTENT>
</REQ-IF>
`;

const SCHEMA = {
  components: [
    { type: 'textfield', key: 'foreign_id', label: 'Foreign ID' },
    { type: 'textfield', key: 'title', label: 'Title' },
    { type: 'textarea', key: 'note', label: 'Note' },
  ],
};

interface Listed {
  name: string;
  data: Record<string, unknown>;
  context: { global_element_id?: string | null };
}

describe('rxs import of a ReqIF file: its standard attributes (ReqIF.*) fill the fields they are renamed to', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let file: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);
  const recordsOf = async (revision: string) =>
    ((await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body as Listed[])
      .map(({ name, data, context }) => ({ name, data, sourceId: context.global_element_id }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-reqif-standard-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    file = join(dir, 'doors.reqif');
    writeFileSync(file, DOORS_REQIF);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--rename "ReqIF.ForeignID=Foreign ID" and "ReqIF.Name=Title" fill those fields; the name stays ReqIF.Name', async () => {
    const topic = await approvedTopic(t, 'Pump Requirements', { schema: SCHEMA });
    const result = await rxs(
      'import',
      '--kt',
      topic,
      file,
      '--rename',
      'ReqIF.ForeignID=Foreign ID',
      '--rename',
      'ReqIF.Name=Title',
      '--rename',
      'ReqIF.Text=Note',
      '--json',
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ rows: 2, created: 2, problems: [] });
    expect(await recordsOf(topic)).toEqual([
      {
        name: 'Start within 2 s',
        data: { foreign_id: 'REQ-1', title: 'Start within 2 s', note: 'The pump starts within 2 s.' },
        sourceId: '_o1',
      },
      {
        name: 'Stop safely',
        data: { foreign_id: 'REQ-2', title: 'Stop safely', note: 'The pump stops without a pressure surge.' },
        sourceId: '_o2',
      },
    ]);
  });

  it('not renamed, they fill no field and stop nothing: the records keep their names', async () => {
    const topic = await approvedTopic(t, 'Pump Requirements Plain', { schema: SCHEMA });
    const result = await rxs('import', '--kt', topic, file, '--json');
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ rows: 2, created: 2, problems: [] });
    expect(report.columns).toEqual([
      { column: 'ReqIF.ForeignID', as: 'ignored' },
      { column: 'ReqIF.Name', as: 'ignored' },
      { column: 'ReqIF.Text', as: 'ignored' },
    ]);
    expect((await recordsOf(topic)).map(({ name, data }) => [name, data])).toEqual([
      ['Start within 2 s', {}],
      ['Stop safely', {}],
    ]);
  });
});
