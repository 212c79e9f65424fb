import type {
  KnowledgeTopicCreate,
  KnowledgeTopicRevision,
  KnowledgeTopicStatus,
  KnowledgeTopicUpdate,
} from '../contract/knowledge-topic.js';
import { expectArray, expectObject } from './shape.js';
import type { Call, RequestOptions, Transport } from './transport.js';
import { pathSegment } from './url.js';

/** Filters and paging of `GET /kt/`. */
export interface TopicListQuery {
  knowledge_topic_history_id?: string;
  status?: KnowledgeTopicStatus;
  /** Case-insensitive part of the name. */
  name?: string;
  /** Page size (the server applies a default and a maximum). */
  limit?: number;
  /** The last `_id` of the previous page. */
  after?: string;
  /** Only each topic's current revision. */
  current?: boolean;
}

export interface TechdocClient {
  /** `GET /kt/{revision_id}`: a knowledge topic revision with its form schema. */
  getTopic(revisionId: string, options?: RequestOptions): Promise<KnowledgeTopicRevision>;
  /** `GET /kt/`: one page (the server's default size unless `limit`). */
  listTopics(query?: TopicListQuery, options?: RequestOptions): Promise<KnowledgeTopicRevision[]>;
  /** `GET /kt/`, following `Link: <...>; rel="next"` from page to page. */
  iterateTopics(query?: TopicListQuery, options?: RequestOptions): AsyncIterable<KnowledgeTopicRevision>;
  /** `POST /kt/`: a new topic as a draft revision (201). Never retried. */
  createTopic(body: KnowledgeTopicCreate, options?: RequestOptions): Promise<KnowledgeTopicRevision>;
  /** `PATCH /kt/{id}`: edits a draft revision (an approved one is 409). Never retried. */
  updateTopic(
    id: string,
    body: KnowledgeTopicUpdate,
    options?: RequestOptions,
  ): Promise<KnowledgeTopicRevision>;
  /** `POST /kt/{id}/draft`: opens a new draft from a revision (201). Never retried. */
  openDraft(id: string, options?: RequestOptions): Promise<KnowledgeTopicRevision>;
  /** `POST /kt/{id}/approve`: approves a draft (200); a re-approval yields a new revision id. Never retried. */
  approve(id: string, options?: RequestOptions): Promise<KnowledgeTopicRevision>;
}

const revision = expectObject('a knowledge topic revision');
const revisions = expectArray('a list of knowledge topic revisions');

export function createTechdocClient(transport: Transport, base: URL): TechdocClient {
  const call = (c: Omit<Call, 'service' | 'base'>): Call => ({ service: 'techdoc', base, ...c });
  const topicPath = (id: string, suffix = '') =>
    `/kt/${pathSegment(id, 'The knowledge topic revision id')}${suffix}`;

  const listPage = (path: string | URL, query: TopicListQuery, signal?: AbortSignal) =>
    transport.jsonPage<KnowledgeTopicRevision[]>(
      call({ method: 'GET', path, query: typeof path === 'string' ? { ...query } : undefined, signal }),
      revisions,
    );

  return {
    getTopic: async (revisionId, options) =>
      transport.json(call({ method: 'GET', path: topicPath(revisionId), signal: options?.signal }), revision),

    listTopics: async (query = {}, options) => (await listPage('/kt/', query, options?.signal)).value,

    iterateTopics: (query = {}, options) => ({
      async *[Symbol.asyncIterator]() {
        let target: string | URL = '/kt/';
        for (;;) {
          const result = await listPage(target, query, options?.signal);
          yield* result.value;
          if (!result.next) return;
          target = result.next;
        }
      },
    }),

    createTopic: async (body, options) =>
      transport.json(call({ method: 'POST', path: '/kt/', body, signal: options?.signal }), revision),

    updateTopic: async (id, body, options) =>
      transport.json(call({ method: 'PATCH', path: topicPath(id), body, signal: options?.signal }), revision),

    openDraft: async (id, options) =>
      transport.json(
        call({ method: 'POST', path: topicPath(id, '/draft'), signal: options?.signal }),
        revision,
      ),

    approve: async (id, options) =>
      transport.json(
        call({ method: 'POST', path: topicPath(id, '/approve'), signal: options?.signal }),
        revision,
      ),
  };
}
