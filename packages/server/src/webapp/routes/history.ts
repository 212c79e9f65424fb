import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ObjectId, type RecordVersion, type ServiceRecord } from '@rxs/contract';
import {
  HistoryQuery,
  RestoreBody,
  type RecordHistoryView,
  type RecordVersionDetail,
  type RecordVersionView,
} from '@rxs/web-api';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { isExpensivePage } from '../../http/expensive-reads.js';
import { pageBytes } from '../../http/page-bytes.js';
import { signedIn, type WebContext } from '../context.js';
import { displayValues, recordChanges, RevisionMaps, semanticRecord } from '../record-values.js';

const IdParams = Type.Object({ id: ObjectId });

/**
 * A record's history in the web app: its versions with who, when, why and what changed by semantic
 * name, one old version with its form, and the restore of a deleted record. History is only read.
 */
export function historyRoutes(context: WebContext): FastifyPluginAsync {
  const { techdoc, records, history } = context.services;

  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/records/:id/history',
      {
        config: { permission: 'records:read' },
        schema: {
          params: IdParams,
          querystring: HistoryQuery,
        },
      },
      async (request, reply) => {
        const { principal } = signedIn(request);
        const { limit, before } = request.query;
        const id = request.params.id;
        const budget = pageBytes();
        // At most `limit` versions and about a page's bytes (RXS_PAGE_BYTES), planned from their
        // sizes; the page shows "Older versions" for the rest.
        const shown = await history.planVersions(principal, id, { limit, before }, budget);
        // The oldest shown version is compared with the one before it, read as well.
        const last = shown.numbers[shown.numbers.length - 1];
        const older =
          shown.next === undefined || last === undefined
            ? undefined
            : await history.planVersions(principal, id, { limit: 1, before: last }, budget);
        const read = {
          ...shown,
          numbers: [...shown.numbers, ...(older?.numbers ?? [])],
          sizes: [...shown.sizes, ...(older?.sizes ?? [])],
          bytes: shown.bytes + (older?.bytes ?? 0),
        };
        if (isExpensivePage(read.bytes, budget)) history.expensiveReads.hold(principal, reply);
        const maps = new RevisionMaps(techdoc, principal);
        // One version and the one before it in memory at a time; each view is JSON as soon as it
        // is made, and the page ends early, at least one view in, before the views pass its bytes.
        const views: string[] = [];
        let bytes = 0;
        let next: number | null = shown.next ?? null;
        let pending: RecordVersion | undefined;
        let previousN: number | undefined;
        /** Adds the view of `version`, or says the page is full without it. */
        const add = async (version: RecordVersion, previous: RecordVersion | undefined) => {
          const view = JSON.stringify(await versionView(maps, version, previous));
          // Comparing large records takes a while: every other request gets a turn in between.
          await yieldToEventLoop();
          if (views.length > 0 && bytes + view.length > budget) return false;
          views.push(view);
          bytes += view.length;
          previousN = version.n;
          return true;
        };
        for await (const version of history.readVersions(principal, id, read)) {
          if (pending && !(await add(pending, version))) {
            next = previousN!;
            pending = undefined;
            break;
          }
          pending = views.length < shown.numbers.length ? version : undefined;
        }
        if (pending && !(await add(pending, undefined))) next = previousN!;
        // The record now (its newest version), without its values.
        const newest = await history.newest(principal, id);
        const topic = (await maps.get(newest?.revisionId))?.revision;
        const head: Omit<RecordHistoryView, 'versions' | 'next'> = {
          recordId: id,
          name: newest?.name ?? '',
          deleted: newest?.action === 'deleted',
          topic: topic
            ? {
                historyId: topic.knowledge_topic_history_id,
                revisionId: topic._id,
                name: topic.knowledge_topic_name,
              }
            : null,
        };
        return reply
          .type('application/json; charset=utf-8')
          .send(`${JSON.stringify(head).slice(0, -1)},"versions":[${views.join(',')}],"next":${next}}`);
      },
    );

    app.get(
      '/records/:id/versions/:n',
      {
        config: { permission: 'records:read' },
        schema: { params: Type.Object({ id: ObjectId, n: Type.Integer({ minimum: 1 }) }) },
      },
      async (request): Promise<RecordVersionDetail> => {
        const { principal } = signedIn(request);
        const { id, n } = request.params;
        const version = await history.getVersion(principal, id, n);
        const [previous] = (await history.listVersions(principal, id, { limit: 1, before: n })).items;
        const maps = new RevisionMaps(techdoc, principal);
        const mapped = await maps.get(version.record.context.knowledge_unit_topic_id);
        return {
          version: await versionView(maps, version, previous),
          record: version.record,
          topic: mapped
            ? {
                historyId: mapped.revision.knowledge_topic_history_id,
                revisionId: mapped.revision._id,
                name: mapped.revision.knowledge_topic_name,
                schema: mapped.revision.knowledge_topic_schema,
              }
            : null,
          values: mapped ? displayValues(version.record, mapped.map) : [],
        };
      },
    );

    app.post(
      '/records/:id/restore',
      {
        config: { permission: 'records:write' },
        schema: {
          params: IdParams,
          body: RestoreBody,
        },
      },
      async (request): Promise<ServiceRecord> => {
        const { principal } = signedIn(request);
        return records.restore(principal, request.params.id, { reason: request.body.change_reason });
      },
    );
  };
}

/** A version for the page: who (by e-mail), when, why, and its differences to the version before. */
async function versionView(
  maps: RevisionMaps,
  version: RecordVersion,
  previous: RecordVersion | undefined,
): Promise<RecordVersionView> {
  const after = semanticRecord(
    version.record,
    (await maps.get(version.record.context.knowledge_unit_topic_id))?.map,
  );
  const before = previous
    ? semanticRecord(previous.record, (await maps.get(previous.record.context.knowledge_unit_topic_id))?.map)
    : undefined;
  return {
    n: version.n,
    action: version.action,
    at: version.at,
    by: version.user_email ?? version.user_id,
    keyId: version.key_id,
    via: version.via,
    reason: version.reason,
    name: version.record.name,
    version: version.record.version,
    revisionId: version.record.context.knowledge_unit_topic_id ?? null,
    changes: recordChanges(before, after),
  };
}
