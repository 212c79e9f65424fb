import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../../contract/src/record.js';
import { exportParts } from './procedure.js';
import { createClient } from '../../../client/src/client.js';
import { exportSourceOf } from './client-source.js';
import { layouts, sendJson, TestServers } from '../../../client/src/test-server.js';

const sample = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../../../reference/samples/${name}`, import.meta.url), 'utf8'),
  ) as unknown;
const topic = sample('kt_system_requirements.json') as KnowledgeTopicRevision;
const records = sample('records_system_requirements.json') as ServiceRecord[];

const servers = new TestServers();
afterEach(() => servers.closeAll());

describe('exportSourceOf', () => {
  it('runs the export procedure against three separate services', async () => {
    const techdoc = await servers.serve((_request, response) => sendJson(response, 200, topic));
    const recordsServer = await servers.serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(layouts.lines(records));
    });
    const tracer = await servers.serve((_request, response) => sendJson(response, 200, { results: {} }));
    const client = createClient({
      techdocUrl: techdoc.url,
      recordsUrl: recordsServer.url,
      tracerUrl: tracer.url,
      apiKey: 'rxs_export_source_key',
    });
    const kinds: string[] = [];
    for await (const part of exportParts(exportSourceOf(client), {
      revisionIds: [topic._id],
      traces: true,
    })) {
      kinds.push(part.kind);
    }
    expect(kinds.filter((kind) => kind === 'record')).toHaveLength(records.length);
    expect(kinds.at(-2)).toBe('traces');
    // The topic's outline first (this service answers it with a listing: no outline, exported flat).
    expect(recordsServer.requests.map((request) => request.url)).toEqual([
      `/records/outline/${topic.knowledge_topic_history_id}`,
      `/records/?context__knowledge_unit_topic_id=${topic._id}`,
    ]);
    expect(tracer.requests.length).toBeGreaterThan(0);
  });
});
