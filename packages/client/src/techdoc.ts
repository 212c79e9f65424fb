import type {
  KnowledgeTopicCreate,
  KnowledgeTopicRevision,
  KnowledgeTopicStatus,
  KnowledgeTopicUpdate,
} from '@rxs/contract';
import type {
  Account,
  Approval,
  ApprovalMeaning,
  Baseline,
  BaselineCreate,
  BaselineEvent,
  BaselineRefusalCreate,
  BaselineSignatureCreate,
} from '@rxs/contract';
import { isObjectId } from '@rxs/contract/plain';
import { RxsApiError } from './errors.js';
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
  /** `GET /kt/{revision_id}`: a knowledge topic revision with its form schema; with `asOf`, as it was then. */
  getTopic(revisionId: string, options?: RequestOptions & { asOf?: string }): Promise<KnowledgeTopicRevision>;
  /** `GET /kt/{id}/approval`: who approved the revision, when, meaning and reason; undefined for a draft. */
  getApproval(revisionId: string, options?: RequestOptions): Promise<Approval | undefined>;
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
  /**
   * `POST /kt/{id}/approve`: approves a draft (200); a re-approval yields a new revision id. The
   * meaning (approved, reviewed) and reason are kept with the approval. Never retried.
   */
  approve(
    id: string,
    options?: RequestOptions & { meaning?: ApprovalMeaning; reason?: string },
  ): Promise<KnowledgeTopicRevision>;
  /** `POST /baselines/` (201): names a moment over some revisions; 409 when the name is taken. Never retried. */
  createBaseline(body: BaselineCreate, options?: RequestOptions): Promise<Baseline>;
  /** `GET /baselines/`, every page (optionally only the one with this exact name). */
  listBaselines(query?: { name?: string }, options?: RequestOptions): Promise<Baseline[]>;
  /** `GET /baselines/{id}`. */
  getBaseline(id: string, options?: RequestOptions): Promise<Baseline>;
  /** A baseline by id or by exact name; an error naming it when there is none. */
  findBaseline(nameOrId: string, options?: RequestOptions): Promise<Baseline>;
  /**
   * `POST /baselines/{id}/signatures` (201): signs a proposed baseline with the meaning asked of the
   * key's user and their web password; the last required signature releases it. Never retried.
   */
  signBaseline(id: string, body: BaselineSignatureCreate, options?: RequestOptions): Promise<Baseline>;
  /** `POST /baselines/{id}/refusals` (201): refuses a proposed baseline, which ends it. Never retried. */
  refuseBaseline(id: string, body: BaselineRefusalCreate, options?: RequestOptions): Promise<Baseline>;
  /** `GET /baselines/{id}/history`: every step of the baseline, oldest first. */
  baselineHistory(id: string, options?: RequestOptions): Promise<BaselineEvent[]>;
  /**
   * `GET /account` (RXS): the key's user, role and tenant. Undefined from a server without it
   * (404), which the interface document allows.
   */
  account(options?: RequestOptions): Promise<Account | undefined>;
}

/** No baseline has the name or id a caller gave. */
export class BaselineNotFoundError extends Error {
  override name = 'BaselineNotFoundError';
  readonly code = 'RXS_ERR_BASELINE_NOT_FOUND';
  constructor(readonly nameOrId: string) {
    super(
      `No baseline is named "${nameOrId}" (nor has that id). List the baselines with \`rxs baseline list\` (GET /baselines/).`,
    );
  }
}

const revision = expectObject('a knowledge topic revision');
const approval = expectObject('an approval');
const baseline = expectObject('a baseline');
const baselines = expectArray('a list of baselines');
const baselineEvents = expectArray('the steps of a baseline');
const account = expectObject('an account');
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

  const baselinePath = (id: string, suffix = '') =>
    `/baselines/${pathSegment(id, 'The baseline id')}${suffix}`;
  async function listBaselines(query: { name?: string } = {}, options?: RequestOptions): Promise<Baseline[]> {
    const all: Baseline[] = [];
    let target: string | URL = '/baselines/';
    for (;;) {
      const page: { value: Baseline[]; next: URL | undefined } = await transport.jsonPage<Baseline[]>(
        call({
          method: 'GET',
          path: target,
          query: typeof target === 'string' ? { ...query, limit: 500 } : undefined,
          signal: options?.signal,
        }),
        baselines,
      );
      all.push(...page.value);
      if (!page.next) return all;
      target = page.next;
    }
  }

  return {
    getTopic: async (revisionId, options) =>
      transport.json(
        call({
          method: 'GET',
          path: topicPath(revisionId),
          query: options?.asOf === undefined ? undefined : { as_of: options.asOf },
          signal: options?.signal,
        }),
        revision,
      ),

    getApproval: async (revisionId, options) => {
      try {
        return await transport.json<Approval>(
          call({ method: 'GET', path: topicPath(revisionId, '/approval'), signal: options?.signal }),
          approval,
        );
      } catch (error) {
        // A draft has no approval; a server without approvals (404/405 for the route) neither.
        if (error instanceof RxsApiError && (error.status === 404 || error.status === 405)) return undefined;
        throw error;
      }
    },

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
        call({
          method: 'POST',
          path: topicPath(id, '/approve'),
          body:
            options?.meaning === undefined && options?.reason === undefined
              ? undefined
              : { meaning: options.meaning, reason: options.reason },
          signal: options?.signal,
        }),
        revision,
      ),

    createBaseline: async (body, options) =>
      transport.json(call({ method: 'POST', path: '/baselines/', body, signal: options?.signal }), baseline),

    listBaselines: (query, options) => listBaselines(query, options),

    getBaseline: async (id, options) =>
      transport.json(call({ method: 'GET', path: baselinePath(id), signal: options?.signal }), baseline),

    findBaseline: async (nameOrId, options) => {
      if (isObjectId(nameOrId)) {
        try {
          return await transport.json<Baseline>(
            call({ method: 'GET', path: baselinePath(nameOrId), signal: options?.signal }),
            baseline,
          );
        } catch (error) {
          if (!(error instanceof RxsApiError && error.status === 404)) throw error;
        }
      }
      const [found] = await listBaselines({ name: nameOrId }, options);
      if (!found) throw new BaselineNotFoundError(nameOrId);
      return found;
    },

    signBaseline: async (id, body, options) =>
      transport.json(
        call({ method: 'POST', path: baselinePath(id, '/signatures'), body, signal: options?.signal }),
        baseline,
      ),

    refuseBaseline: async (id, body, options) =>
      transport.json(
        call({ method: 'POST', path: baselinePath(id, '/refusals'), body, signal: options?.signal }),
        baseline,
      ),

    baselineHistory: async (id, options) =>
      transport.json(
        call({ method: 'GET', path: baselinePath(id, '/history'), signal: options?.signal }),
        baselineEvents,
      ),

    account: async (options) => {
      try {
        return await transport.json<Account>(
          call({ method: 'GET', path: '/account', signal: options?.signal }),
          account,
        );
      } catch (error) {
        if (error instanceof RxsApiError && error.status === 404) return undefined;
        throw error;
      }
    },
  };
}
