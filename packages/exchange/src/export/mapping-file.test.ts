import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  hostileRevisionIds,
  hostileSource,
  HOSTILE_TOPIC_HISTORY,
} from '../../test/support/hostile-corpus.js';
import {
  exportMappingFromText,
  loadMappingFile,
  MappingFileError,
  parseMappingFile,
  stripJsonComments,
} from './mapping-file.js';
import type { ExportedField, ExportPart } from './model.js';
import { exportParts } from './procedure.js';

const field = (name: string): ExportedField => ({ key: name.toLowerCase(), name, source: 'label' });
const requirementsFields = ['Name', 'Description', 'Type', 'Priority'].map(field);
const requirements = { name: 'System Requirements', historyId: '69b989a14252b7481003afab' };
const tests = { name: 'Verification Tests', historyId: '69b989a14252b7481003afac' };

/** The problems a mapping file's text is refused with. */
function problemsOf(text: string): { place: string; message: string }[] {
  try {
    parseMappingFile(text, 'm.jsonc');
  } catch (error) {
    expect(error).toBeInstanceOf(MappingFileError);
    return (error as MappingFileError).problems;
  }
  throw new Error('the mapping file was accepted');
}

const dir = mkdtempSync(join(tmpdir(), 'rxs-mapping-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mapping files', () => {
  it('the shipped example is valid and names the demo topics and the verifies link', () => {
    const text = readFileSync(new URL('../../../../docs/mapping.example.jsonc', import.meta.url), 'utf8');
    const mapping = exportMappingFromText(text);
    const { presentation, rule } = mapping.topic(requirements, requirementsFields);
    expect(presentation).toMatchObject({ needType: 'req', idPrefix: 'REQ', titleField: 'Name' });
    expect(rule.sources).toContain('title');
    expect(mapping.linkType(tests, requirements)).toMatchObject({
      name: 'verifies',
      incoming: 'verified by',
    });
    expect(mapping.linkType(requirements, tests)).toBeUndefined();
  });

  it('comments and trailing commas are allowed, outside strings only', () => {
    expect(stripJsonComments('{"a": "http://x//y", // note\n/* b */ "b": 1}')).toBe(
      '{"a": "http://x//y",        \n        "b": 1}',
    );
    expect(JSON.parse(stripJsonComments('{"a": [1, 2, ], "b": ",}", // c\n}'))).toEqual({
      a: [1, 2],
      b: ',}',
    });
    expect(parseMappingFile('{"topics": [{"name": "A",},], // x\n}').topics).toEqual([{ name: 'A' }]);
  });

  it('a topic is matched by history id or name; its settings override the defaults', () => {
    const byHistory = exportMappingFromText(
      JSON.stringify({
        topics: [
          {
            historyId: requirements.historyId,
            needType: 'sysreq',
            reqifType: 'System Requirement',
            fields: { title: 'Name', description: 'Description', status: 'Priority' },
            identifier: { from: [{ field: 'Type' }, 'record-id'], pattern: '^([A-Z]+)' },
          },
        ],
      }),
    );
    const renamed = { ...requirements, name: 'Renamed after re-approval' };
    const { presentation, rule } = byHistory.topic(renamed, requirementsFields);
    expect(presentation).toEqual({
      needType: 'sysreq',
      idPrefix: 'SYSREQ',
      reqifTypeName: 'System Requirement',
      titleField: 'Name',
      descriptionField: 'Description',
      statusField: 'Priority',
    });
    expect(rule.sources).toEqual([{ field: 'Type' }]);
    expect(rule.pattern.source).toBe('^([A-Z]+)');
    expect(rule.prefix).toBe('SYSREQ');
    // Not named by the file: the defaults.
    expect(byHistory.topic(tests, []).presentation).toMatchObject({ needType: 'test', idPrefix: 'TEST' });
  });

  it('reports every mistake at once, each with its place', () => {
    const problems = problemsOf(`{
      // a comment
      "topics": [
        { "name": "System Requirements", "needType": "Sys Req", "identifier": { "pattern": "([A-Z" } },
        { "name": "System Requirements", "idPrefix": "1REQ", "colour": "red" },
        { "historyId": "abc", "identifier": { "pattern": "^REQ_\\\\d+", "from": ["record-id", "name", "tilte"] } },
        { "needType": "req" }
      ],
      "links": [
        { "from": "Verification Tests", "to": "System Requirements", "name": "Verified By" },
        { "from": "Verification Tests", "to": "System Requirements", "name": "verifies" },
        { "from": "Verification Tests", "to": "System Requirements", "name": "checks" },
        { "from": "A", "to": "B", "name": "links" }
      ]
    }`);
    const at = (place: string) => problems.filter((p) => p.place === place).map((p) => p.message);
    expect(at('topics[0] ("System Requirements").needType')[0]).toMatch(
      /"Sys Req" is not a Sphinx-Needs type/,
    );
    expect(at('topics[0] ("System Requirements").identifier.pattern')[0]).toMatch(
      /is not a valid regular expression/,
    );
    expect(at('topics[1] ("System Requirements").name')[0]).toMatch(/already has an entry \(topics\[0\]/);
    expect(at('topics[1] ("System Requirements").idPrefix')[0]).toMatch(/"1REQ" cannot start an id/);
    expect(at('topics[1] ("System Requirements").colour')[0]).toMatch(/unknown key "colour"/);
    expect(at('topics[2] ("abc").identifier.pattern')[0]).toMatch(
      /has 0 capture groups; it needs exactly one/,
    );
    expect(at('topics[2] ("abc").identifier.from[0]')[0]).toMatch(/put it last/);
    expect(at('topics[2] ("abc").identifier.from[2]')[0]).toMatch(/"tilte" is not a source/);
    expect(at('topics[3]')[0]).toMatch(/names no topic/);
    expect(at('links[0].name')[0]).toMatch(/"Verified By" is not a Sphinx-Needs link option name/);
    expect(at('links[2]')[0]).toMatch(/already named in links\[1\]/);
    expect(at('links[3].name')[0]).toMatch(/already has/);
    expect(problems).toHaveLength(12);
  });

  it('the error message lists every problem and says what to do', () => {
    const text = '{"topics": [{"name": "A", "needType": "A"}], "links": [{"from": "A"}]}';
    expect(() => parseMappingFile(text, 'm.json')).toThrow(
      /The mapping file m\.json has 3 mistakes; correct them.*\n {2}topics\[0\] \("A"\)\.needType: .*\n {2}links\[0\]\.to: must name a topic.*\n {2}links\[0\]\.name: must be the link type name/,
    );
  });

  it('bad JSON names its line and column', () => {
    const [problem] = problemsOf('{\n  "topics": [\n    { "name": "A" "needType": "a" }\n  ]\n}');
    expect(problem!.place).toBe('line 3, column 19');
    expect(problem!.message).toMatch(/not valid JSON/);
  });

  it('a wrong field name of an exported topic is an error naming the fields it has', () => {
    const mapping = exportMappingFromText(
      JSON.stringify({
        topics: [
          {
            name: 'System Requirements',
            fields: { title: 'Title', status: null },
            identifier: { from: ['title', { field: 'Nmae' }] },
          },
        ],
      }),
      'm.json',
    );
    let error: unknown;
    try {
      mapping.topic(requirements, requirementsFields);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MappingFileError);
    expect((error as MappingFileError).problems).toEqual([
      {
        place: 'topics[0] ("System Requirements").fields.title',
        message: `"System Requirements" has no field "Title"; its semantic field names are: "Name", "Description", "Type", "Priority".`,
      },
      {
        place: 'topics[0] ("System Requirements").identifier.from[1].field',
        message: expect.stringContaining('has no field "Nmae"'),
      },
    ]);
  });

  it('two entries matching one topic (by name and by history id) are an error', () => {
    const mapping = exportMappingFromText(
      JSON.stringify({ topics: [{ name: requirements.name }, { historyId: requirements.historyId }] }),
    );
    expect(() => mapping.topic(requirements, requirementsFields)).toThrow(
      /topics\[0\] and topics\[1\]: both match/,
    );
  });

  it('in an export: topics named by the file that the export lacks are warnings, link names reach the traces', async () => {
    const mapping = exportMappingFromText(
      JSON.stringify({
        topics: [
          {
            name: 'Hostile Requirements',
            needType: 'hreq',
            idPrefix: 'HR',
            identifier: { from: ['record-id'] },
          },
          { name: 'Risk Register' },
        ],
        links: [
          {
            from: HOSTILE_TOPIC_HISTORY,
            to: 'Hostile Requirements',
            name: 'refines',
            incoming: 'refined by',
          },
          { from: 'Hostile Requirements', to: 'Nowhere', name: 'mitigates' },
        ],
      }),
      'm.json',
    );
    const parts: ExportPart[] = [];
    for await (const part of exportParts(hostileSource(), {
      revisionIds: hostileRevisionIds(),
      traces: true,
      mapping,
    }))
      parts.push(part);
    const topic = parts.find((p) => p.kind === 'topic');
    expect(topic?.kind === 'topic' && topic.topic.presentation.needType).toBe('hreq');
    const records = parts.flatMap((p) => (p.kind === 'record' ? [p.record] : []));
    expect(records.every((r) => r.readableId === `HR_${r.id}`)).toBe(true);
    const traces = parts.find((p) => p.kind === 'traces');
    if (traces?.kind !== 'traces') throw new Error('no traces part');
    expect(traces.linkTypes).toEqual([
      {
        name: 'refines',
        incoming: 'refined by',
        sourceTopicHistoryId: HOSTILE_TOPIC_HISTORY,
        targetTopicHistoryId: HOSTILE_TOPIC_HISTORY,
      },
    ]);
    expect(traces.traces.every((t) => t.linkType === 'refines')).toBe(true);
    const end = parts.at(-1);
    if (end?.kind !== 'end') throw new Error('no end part');
    expect(end.warnings).toEqual([
      expect.stringMatching(
        /settings for the topic "Risk Register" \(topics\[1\]\), which is not in this export/,
      ),
      expect.stringMatching(/link "mitigates" \(links\[1\]\) for the topic "Nowhere"/),
    ]);
  });

  it('a missing file says so and points at the example', async () => {
    await expect(loadMappingFile(join(dir, 'none.json'))).rejects.toThrow(
      /none\.json has a mistake.*\n {2}\(file\): there is no such file; .*mapping\.example\.jsonc/,
    );
    const file = join(dir, 'ok.json');
    writeFileSync(file, '{"topics": [{"name": "A", "needType": "a"}]}');
    expect((await loadMappingFile(file)).content.topics[0]).toMatchObject({ name: 'A', needType: 'a' });
  });
});
