import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  importReqifLinks,
  type LinkImportClient,
  readReqifLinks,
  readSpecHierarchies,
  readSpecRelations,
  type SpecHierarchy,
  type SpecRelation,
} from '../src/index.js';

/**
 * readReqifLinks reads a file's SPEC-RELATIONs and SPECIFICATIONs in one pass: for every file of
 * other tools in the corpus, exactly what the two readers give on their own, in file order.
 */
const corpus = join(import.meta.dirname, 'fixtures', 'reqif');
const files = readdirSync(corpus).filter((name) => /\.reqifz?$/.test(name));

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const item of items) found.push(item);
  return found;
}

describe('readReqifLinks: relations and hierarchies in one read', () => {
  it('has files to read', () => expect(files.length).toBeGreaterThan(5));

  it.each(files)('%s: the relations and the hierarchies the two readers give', async (name) => {
    const file = join(corpus, name);
    const relations: SpecRelation[] = [];
    const specifications: SpecHierarchy[] = [];
    for await (const link of readReqifLinks(file))
      if ('relation' in link) relations.push(link.relation);
      else specifications.push(link.specification);
    expect(relations).toEqual(await all(readSpecRelations(file)));
    expect(specifications).toEqual(await all(readSpecHierarchies(file)));
  });
});

describe('importReqifLinks', () => {
  it("lists the topics' records once for the traces and the outlines together", async () => {
    const file = join(corpus, 'rmf-tc1300-spec-relation.reqif');
    const [relation] = await all(readSpecRelations(file));
    const [hierarchy] = await all(readSpecHierarchies(file));
    const listed: string[] = [];
    const created: unknown[] = [];
    const put: unknown[] = [];
    const client = {
      techdoc: { getTopic: async () => ({ knowledge_topic_history_id: 'H', knowledge_topic_name: 'T' }) },
      records: {
        async *listRecords(query: { context__knowledge_unit_topic_id: string }) {
          listed.push(query.context__knowledge_unit_topic_id);
          // Every spec object of the file is a record of the topic, by its IDENTIFIER.
          const objects = new Set([
            relation!.source,
            relation!.target,
            ...hierarchy!.entries.map((e) => e.object),
          ]);
          for (const object of objects)
            yield { _id: `rec-${object}`, context: { global_element_id: object } };
        },
        getOutline: async () => ({ entries: [] }),
        putOutline: async (historyId: string, entries: unknown) => void put.push({ historyId, entries }),
      },
      tracer: {
        createTrace: async (body: unknown) => void created.push(body),
        listTracesFor: async () => ({ results: {}, edges: [] }),
      },
    } as unknown as LinkImportClient;
    const report = await importReqifLinks(client, file, { revisionIds: ['rev-1'] });
    expect(listed).toEqual(['rev-1']);
    expect(report.relations.created).toBeGreaterThan(0);
    expect(created).toContainEqual(
      expect.objectContaining({ source: { node_id: `rec-${relation!.source}`, node_type: 'Record' } }),
    );
    expect(report.outline.entries).toBe(hierarchy!.entries.filter((e) => e.object).length);
    expect(put).toHaveLength(1);
  });
});
