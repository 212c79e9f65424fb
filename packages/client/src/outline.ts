import type { OutlineEntry, RecordOutline } from '@rxs/contract';
import type { ShapeCheck } from './shape.js';
import type { Call, RequestOptions, Transport } from './transport.js';
import { pathSegment } from './url.js';

/** RXS: a topic's document outline, on the records service (`/records/outline/{knowledge_topic_history_id}`). */
export interface OutlineClient {
  /**
   * RXS `GET /records/outline/{knowledge_topic_history_id}`: the topic's records in document order,
   * each at its level (1 the top); the topic's records it does not name come after them, by `_id`.
   * No entries (and null `updated_at`, `updated_by`) before the first `putOutline`. The topic is
   * named by its history id (`knowledge_topic_history_id`), not a revision id: NotFoundError for an
   * id that is no topic's history id in the tenant, and from a service without outlines.
   */
  getOutline(knowledgeTopicHistoryId: string, options?: RequestOptions): Promise<RecordOutline>;
  /**
   * RXS `PUT /records/outline/{knowledge_topic_history_id}`: replaces the topic's outline whole
   * (ValidationError, one item per entry, for a level skipped, a record named twice or an id that is
   * no record of the topic). Retried like a read: sending the same outline again changes nothing.
   */
  putOutline(
    knowledgeTopicHistoryId: string,
    entries: readonly OutlineEntry[],
    options?: RequestOptions,
  ): Promise<RecordOutline>;
}

const recordOutline: ShapeCheck = (value) =>
  value !== null && typeof value === 'object' && Array.isArray((value as { entries?: unknown }).entries)
    ? undefined
    : 'is not a document outline (a JSON object with "entries")';

/** The outline methods of the records client, calling through `call` (the records service's base). */
export function outlineMethods(
  transport: Transport,
  call: (c: Omit<Call, 'service' | 'base'>) => Call,
): OutlineClient {
  const outlinePath = (id: string) => `/records/outline/${pathSegment(id, 'The knowledge topic history id')}`;
  return {
    getOutline: async (id, options) =>
      transport.json(call({ method: 'GET', path: outlinePath(id), signal: options?.signal }), recordOutline),

    putOutline: async (id, entries, options) =>
      transport.json(
        call({
          method: 'PUT',
          path: outlinePath(id),
          body: { entries },
          idempotent: true,
          signal: options?.signal,
        }),
        recordOutline,
      ),
  };
}
