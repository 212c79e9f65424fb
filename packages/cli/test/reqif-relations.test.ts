import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/** Two spec object types and the relations between their objects, one to an object the file lacks. */
const TWO_TYPES_REQIF = `<?xml version="1.0" encoding="UTF-8"?>
<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd">
  <CORE-CONTENT><REQ-IF-CONTENT>
    <DATATYPES><DATATYPE-DEFINITION-STRING IDENTIFIER="DT-S" MAX-LENGTH="1000"/></DATATYPES>
    <SPEC-TYPES>
      <SPEC-OBJECT-TYPE IDENTIFIER="T-SR" LONG-NAME="Software Requirement"><SPEC-ATTRIBUTES>
        <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="SR-NAME" LONG-NAME="ReqIF.Name"><TYPE><DATATYPE-DEFINITION-STRING-REF>DT-S</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>
        <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="SR-NOTE" LONG-NAME="Note"><TYPE><DATATYPE-DEFINITION-STRING-REF>DT-S</DATATYPE-DEFINITION-STRING-REF></TYPE>
          <DEFAULT-VALUE><ATTRIBUTE-VALUE-STRING THE-VALUE="to be written"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>SR-NOTE</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING></DEFAULT-VALUE>
        </ATTRIBUTE-DEFINITION-STRING>
      </SPEC-ATTRIBUTES></SPEC-OBJECT-TYPE>
      <SPEC-OBJECT-TYPE IDENTIFIER="T-TC" LONG-NAME="Test Case"><SPEC-ATTRIBUTES>
        <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="TC-NAME" LONG-NAME="ReqIF.Name"><TYPE><DATATYPE-DEFINITION-STRING-REF>DT-S</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>
      </SPEC-ATTRIBUTES></SPEC-OBJECT-TYPE>
      <SPEC-RELATION-TYPE IDENTIFIER="RT-V" LONG-NAME="Verifies"/>
      <SPEC-RELATION-TYPE IDENTIFIER="RT-R" LONG-NAME="Refines"/>
    </SPEC-TYPES>
    <SPEC-OBJECTS>
${[
  ['SR-1', 'T-SR', 'SR-NAME', 'Start within 2 s', 'fast'],
  ['SR-2', 'T-SR', 'SR-NAME', 'Stop safely', undefined],
  ['TC-1', 'T-TC', 'TC-NAME', 'Measure the start', undefined],
  ['TC-2', 'T-TC', 'TC-NAME', 'Pull the plug', undefined],
]
  .map(
    ([id, type, nameDef, name, note]) =>
      `      <SPEC-OBJECT IDENTIFIER="${id}"><TYPE><SPEC-OBJECT-TYPE-REF>${type}</SPEC-OBJECT-TYPE-REF></TYPE><VALUES>
        <ATTRIBUTE-VALUE-STRING THE-VALUE="${name}"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>${nameDef}</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>${
          note === undefined
            ? ''
            : `
        <ATTRIBUTE-VALUE-STRING THE-VALUE="${note}"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>SR-NOTE</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>`
        }
      </VALUES></SPEC-OBJECT>`,
  )
  .join('\n')}
    </SPEC-OBJECTS>
    <SPEC-RELATIONS>
${[
  ['REL-1', 'RT-V', 'TC-1', 'SR-1'],
  ['REL-2', 'RT-V', 'TC-2', 'SR-2'],
  ['REL-3', 'RT-R', 'SR-2', 'SR-1'],
  ['REL-4', 'RT-V', 'TC-2', 'SR-GONE'],
]
  .map(
    ([id, type, source, target]) =>
      `      <SPEC-RELATION IDENTIFIER="${id}"><TYPE><SPEC-RELATION-TYPE-REF>${type}</SPEC-RELATION-TYPE-REF></TYPE><SOURCE><SPEC-OBJECT-REF>${source}</SPEC-OBJECT-REF></SOURCE><TARGET><SPEC-OBJECT-REF>${target}</SPEC-OBJECT-REF></TARGET></SPEC-RELATION>`,
  )
  .join('\n')}
    </SPEC-RELATIONS>
  </REQ-IF-CONTENT></CORE-CONTENT>
</REQ-IF>
`;

interface Listed {
  _id: string;
  name: string;
  data: Record<string, unknown>;
  context: { global_element_id?: string | null };
}

describe('rxs import of a ReqIF file: several spec object types and their relations', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);
  const recordsOf = async (revision: string) =>
    (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body as Listed[];
  /** The traces of the records, as "source name -relation-> target name", sorted. */
  const tracesOf = async (records: Listed[]) => {
    const names = new Map(records.map((record) => [record._id, record.name]));
    const listed = await t.api('POST', '/traces/batch/list', {
      body: { nodes: records.map((record) => ({ node_id: record._id, node_type: 'Record' })) },
    });
    expect(listed.status, listed.text).toBe(200);
    const edges = new Map<string, string>();
    for (const result of Object.values(
      listed.body.results as Record<
        string,
        { edges: { _id: string; source: string; target: string; relation_type: string[] }[] }
      >,
    ))
      for (const edge of result.edges)
        edges.set(
          edge._id,
          `${names.get(edge.source)} -${edge.relation_type.join(',')}-> ${names.get(edge.target)}`,
        );
    return [...edges.values()].sort();
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-reqif-relations-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports each --type into its topic, then the relations between them as traces, once', async () => {
    const requirements = await approvedTopic(t, 'Software Requirements');
    const tests = await approvedTopic(t, 'Test Cases');
    const file = join(dir, 'two-types.reqif');
    writeFileSync(file, TWO_TYPES_REQIF);
    const args = [
      'import',
      file,
      '--type',
      `Software Requirement=${requirements}`,
      '--type',
      `Test Case=${tests}`,
      '--relation',
      'Verifies=contributes_to',
    ];
    const first = await rxs(...args, '--json');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.imports.map((r: { created: number }) => r.created)).toEqual([2, 2]);
    expect(report.relations).toMatchObject({ relations: 4, created: 3, existing: 0, skipped: 1 });
    expect(report.relations.notes[0]).toContain('REL-4 (target SR-GONE)');

    const srs = await recordsOf(requirements);
    const tcs = await recordsOf(tests);
    // The type's DEFAULT-VALUE applies to the object that carries no value for its attribute.
    expect(srs.map((r) => [r.name, r.data.note, r.context.global_element_id]).sort()).toEqual([
      ['Start within 2 s', 'fast', 'SR-1'],
      ['Stop safely', 'to be written', 'SR-2'],
    ]);
    expect(await tracesOf([...srs, ...tcs])).toEqual([
      'Measure the start -contributes_to-> Start within 2 s',
      'Pull the plug -contributes_to-> Stop safely',
      'Stop safely -is_related-> Start within 2 s',
    ]);

    const again = await rxs(...args);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain('Relations: 4 SPEC-RELATIONs: 0 traces created, 3 existing, 1 skipped.');
    expect(await tracesOf([...srs, ...tcs])).toHaveLength(3);
  });

  it('with one type (--kt), the relations to the other type are skipped with a note', async () => {
    const requirements = await approvedTopic(t, 'Only Requirements');
    const file = join(dir, 'one-type.reqif');
    writeFileSync(file, TWO_TYPES_REQIF);
    const result = await rxs('import', '--kt', requirements, file, '--spec-type', 'Software Requirement');
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('Relations: 4 SPEC-RELATIONs: 1 trace created, 0 existing, 3 skipped.');
    expect(result.stdout).toContain('REL-1 (source TC-1)');
  });

  it('refuses a relation type that is none and --type beside --kt', async () => {
    const file = join(dir, 'refused.reqif');
    writeFileSync(file, TWO_TYPES_REQIF);
    const wrongType = await rxs(
      'import',
      file,
      '--type',
      `Test Case=${'a'.repeat(24)}`,
      '--relation',
      'Verifies=verifies',
    );
    expect(wrongType.code).toBe(1);
    expect(wrongType.stderr).toContain('"verifies" is not a relation type');
    const both = await rxs('import', file, '--kt', 'a'.repeat(24), '--type', `Test Case=${'a'.repeat(24)}`);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('give it without --kt and --spec-type');
  });
});
