import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { ChangeReason, ObjectId, type RecordVersion, type ServiceRecord } from '@rxs/sdk';
import type { RecordHistoryView, RecordVersionDetail, RecordVersionView } from '../api-types.js';
import { signedIn, type WebContext } from '../context.js';
import { displayValues, recordChanges, RevisionMaps, semanticRecord } from '../record-values.js';

const IdParams = Type.Object({ id: ObjectId });
const MAX_PAGE = 200;

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
          querystring: Type.Object({
            limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 50 }),
            before: Type.Optional(Type.Integer({ minimum: 1 })),
          }),
        },
      },
      async (request): Promise<RecordHistoryView> => {
        const { principal } = signedIn(request);
        const { limit, before } = request.query;
        // One more than shown: the oldest shown version is compared with the one before it.
        const page = await history.listVersions(principal, request.params.id, { limit: limit + 1, before });
        const maps = new RevisionMaps(techdoc, principal);
        const shown = page.items.slice(0, limit);
        const versions = await Promise.all(
          shown.map((version, i) => versionView(maps, version, page.items[i + 1])),
        );
        // The record now (its newest version): on the first page the first one, else asked for.
        const newest =
          before === undefined
            ? page.items[0]
            : (await history.listVersions(principal, request.params.id, { limit: 1 })).items[0];
        const topic = (await maps.get(newest?.record.context.knowledge_unit_topic_id))?.revision;
        return {
          recordId: request.params.id,
          name: newest?.record.name ?? '',
          deleted: newest?.action === 'deleted',
          topic: topic
            ? {
                historyId: topic.knowledge_topic_history_id,
                revisionId: topic._id,
                name: topic.knowledge_topic_name,
              }
            : null,
          versions,
          next: page.items.length > limit ? shown[shown.length - 1]!.n : null,
        };
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
          body: Type.Object({ change_reason: Type.Optional(ChangeReason) }, { additionalProperties: false }),
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
