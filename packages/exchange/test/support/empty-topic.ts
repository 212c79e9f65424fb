import type { FormComponent } from '../../../contract/src/form.js';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import type { RecordCreate, ServiceRecord } from '../../../contract/src/record.js';
import type { ImportClient } from '../../src/index.js';

/** The revision id of `emptyTopic`'s topic. */
export const EMPTY_TOPIC_REVISION = 'aaaaaaaaaaaaaaaaaaaaaaaa';

/**
 * An import client of one topic named `name` with `components`, holding no records: it keeps what
 * an import creates (`created`) and refuses updates, so a test sees exactly what a file turns into.
 */
export function emptyTopic(name: string, components: FormComponent[]) {
  const created: RecordCreate[] = [];
  const topic = {
    _id: EMPTY_TOPIC_REVISION,
    latest_revision_id: EMPTY_TOPIC_REVISION,
    knowledge_topic_history_id: 'bbbbbbbbbbbbbbbbbbbbbbbb',
    knowledge_topic_name: name,
    knowledge_topic_schema: { type: 'default', components },
  } as unknown as KnowledgeTopicRevision;
  const client: ImportClient = {
    techdoc: { getTopic: async () => topic, listTopics: async () => [topic] },
    records: {
      listRecords: async function* () {},
      getRecord: async (id) => {
        throw new Error(`no record ${id}`);
      },
      createRecord: async (body) => {
        created.push(body);
        return { _id: 'c'.repeat(24), ...body } as unknown as ServiceRecord;
      },
      updateRecord: async () => {
        throw new Error('no record to update');
      },
      deleteRecord: async () => {
        throw new Error('no record to delete');
      },
      bulkWrite: async (items) => ({
        records: items.map((item) => {
          if ('_id' in item) throw new Error('no record to update');
          const { idempotency_key: _key, ...body } = item;
          created.push(body);
          return { _id: 'c'.repeat(24), version: '1', created: true, replayed: false };
        }),
      }),
    },
  };
  return { client, created };
}
