import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  keptOutline,
  ObjectId,
  linkReading,
  readingText,
  type KnowledgeTopicRevision,
  type Permission,
  type ServiceRecord,
  type TraceRole,
} from '@rxs/contract';
import {
  DocumentQuery,
  MAX_DOCUMENT_BYTES,
  MAX_DOCUMENT_RECORDS,
  type DocumentLink,
  type DocumentRecord,
  type RecordRow,
  type TopicDocument,
} from '@rxs/web-api';
import type { Principal } from '../../auth/principal.js';
import { notFound } from '../../http/errors.js';
import { ExportSlots } from '../../http/export-slots.js';
import { signedIn, type WebContext } from '../context.js';
import { recordsInPages } from '../record-pages.js';
import { RecordIdentities, type RecordIdentityOf } from '../record-identities.js';
import { sortRows } from '../record-table.js';
import { displayValues, RevisionMaps } from '../record-values.js';

/** Revisions of one topic read at most, as the topic page reads them. */
const MAX_REVISIONS = 500;
/** Records read and traced together: well under the tracer's TRACE_BATCH_MAX_NODES. */
const CHUNK = 100;
/** Linked records looked up by one listing: a bounded `IN` list. */
const OTHERS_CHUNK = 500;
/** Characters of a readable id or name kept to order the records: enough to tell them apart. */
const ORDER_KEY_CHARS = 200;

/**
 * A topic's records as a readable specification (`GET /api/topics/{historyId}/document`), now or as
 * of a moment: in the outline's order with its levels (records it does not name after, in the records
 * table's readable-id order), each with its fields under their form labels and its links named by the
 * trace model's roles. The answer holds at most MAX_DOCUMENT_RECORDS records and about
 * MAX_DOCUMENT_BYTES; memory holds an order key per record of the topic and one chunk of records at a
 * time, never the topic.
 */
export function documentRoutes(context: WebContext): FastifyPluginAsync {
  const { techdoc, records, outlines, tracer, readAsOf } = context.services;

  /** The revision the document is of: the current one now; at a moment, the one current then. */
  async function revisionAt(
    principal: Principal,
    historyId: string,
    asOf: string | undefined,
  ): Promise<{ revision: KnowledgeTopicRevision; revisionIds: string[] }> {
    const revisions = (
      await techdoc.list(principal, { knowledge_topic_history_id: historyId, limit: MAX_REVISIONS })
    ).items;
    const any = revisions[0];
    if (!any) throw notFound(`Knowledge topic ${historyId} was not found.`);
    const revisionIds = revisions.map((r) => r._id);
    if (asOf === undefined) {
      const current = revisions.find((r) => r._id === any.latest_revision_id) ?? any;
      return { revision: current, revisionIds };
    }
    const at = Date.parse(asOf);
    const existing = revisions.filter((r) => Date.parse(r.audit_info.timestamp_created) <= at);
    const approvedThen = existing.filter((r) => {
      const approvedAt = r.audit_info.direct_approval_published_at;
      return approvedAt && Date.parse(approvedAt) <= at;
    });
    const newest = (list: KnowledgeTopicRevision[]) =>
      list.reduce<KnowledgeTopicRevision | undefined>(
        (best, r) => (!best || r.audit_info.timestamp_created > best.audit_info.timestamp_created ? r : best),
        undefined,
      );
    const then = newest(approvedThen) ?? newest(existing);
    if (!then) throw notFound(`Knowledge topic ${historyId} did not exist at ${asOf}.`);
    return { revision: await techdoc.getRevision(principal, then._id, { asOf }), revisionIds };
  }

  async function topicDocument(
    principal: Principal,
    historyId: string,
    asOf: string | undefined,
  ): Promise<TopicDocument> {
    const { revision, revisionIds } = await revisionAt(principal, historyId, asOf);
    const maps = new RevisionMaps(techdoc, principal);
    const identities = new RecordIdentities(maps);

    // The order: an order key per record of the topic at the moment, sorted as the records table
    // sorts by readable id, then the outline's records first.
    const rows: RecordRow[] = [];
    for await (const record of recordsInPages(records, principal, { revisionIds, asOf })) {
      const { readableId } = await identities.ofRecord(record);
      rows.push(orderRow(record, readableId));
    }
    sortRows(rows, 'readable-id', 'asc');
    const present = new Set(rows.map((row) => row.id));
    const outline = await outlines.get(principal, historyId);
    const outlined = keptOutline(outline.entries, (entry) => present.has(entry.record_id));
    const placed = new Set(outlined.map((entry) => entry.record_id));
    const ordered = [
      ...outlined.map((entry) => ({ id: entry.record_id, level: entry.level })),
      ...rows.filter((row) => !placed.has(row.id)).map((row) => ({ id: row.id, level: 1 })),
    ];
    rows.length = 0;
    const numbers = outlineNumbers(ordered.map((entry) => entry.level));

    const roles = (await tracer.model.get(principal)).roles;
    const shown: DocumentRecord[] = [];
    let bytes = 0;
    let full = false;
    const wanted = ordered.slice(0, MAX_DOCUMENT_RECORDS);
    for (let start = 0; start < wanted.length && !full; start += CHUNK) {
      const chunk = wanted.slice(start, start + CHUNK);
      const built = new Map<string, DocumentRecord>();
      const ids = chunk.map((entry) => entry.id);
      // The chunk's records come in id order: reading stops once they pass what the answer can
      // still take (with the one that passes it), so memory holds about the answer, not the chunk.
      let chunkBytes = 0;
      let cut = false;
      for await (const record of recordsInPages(records, principal, { ids, asOf })) {
        const index = start + chunk.findIndex((entry) => entry.id === record._id);
        const documented = await documentRecord(identities, record, ordered[index]!.level, numbers[index]!);
        built.set(record._id, documented);
        chunkBytes += JSON.stringify(documented).length;
        if (bytes + chunkBytes > MAX_DOCUMENT_BYTES) {
          cut = true;
          break;
        }
      }
      const links = await linksOf(principal, identities, roles, historyId, [...built.keys()], asOf);
      for (const entry of chunk) {
        const record = built.get(entry.id);
        if (!record && cut) {
          full = true;
          break;
        }
        if (!record) continue; // deleted between the two reads
        record.links = links.get(entry.id) ?? [];
        const size = JSON.stringify(record).length;
        if (shown.length > 0 && bytes + size > MAX_DOCUMENT_BYTES) {
          full = true;
          break;
        }
        shown.push(record);
        bytes += size;
      }
    }
    const last = shown.at(-1);
    const after = last ? ordered.findIndex((entry) => entry.id === last.id) + 1 : 0;
    return {
      historyId,
      name: revision.knowledge_topic_name,
      revisionId: revision._id,
      version: revision.version ?? null,
      asOf: asOf ?? null,
      outlined: outlined.length > 0,
      total: ordered.length,
      records: shown,
      omitted: ordered.length - after,
    };
  }

  /** Each record's direct links (one hop, either way) to other records, by name then readable id. */
  async function linksOf(
    principal: Principal,
    identities: RecordIdentities,
    roles: readonly TraceRole[],
    historyId: string,
    ids: string[],
    asOf: string | undefined,
  ): Promise<Map<string, DocumentLink[]>> {
    if (ids.length === 0) return new Map();
    const graph = await tracer.batchList(
      principal,
      {
        nodes: ids.map((id) => ({ node_id: id, node_type: 'Record' as const, version: '' })),
        n_hops: 1,
        mode: 'legacy_connected_nodes',
      },
      { asOf },
    );
    const others = new Set<string>();
    for (const id of ids)
      for (const edge of graph.results[id]?.edges ?? [])
        others.add(edge.source === id ? edge.target : edge.source);
    const known = new Map<string, RecordIdentityOf>();
    const otherIds = [...others];
    // A chunk's records may have thousands of links: their records are read a bounded list at a time.
    for (let start = 0; start < otherIds.length; start += OTHERS_CHUNK) {
      const chunk = otherIds.slice(start, start + OTHERS_CHUNK);
      for await (const record of recordsInPages(records, principal, { ids: chunk, asOf }))
        known.set(record._id, await identities.ofRecord(record));
    }
    const links = new Map<string, DocumentLink[]>();
    for (const id of ids) {
      const list: DocumentLink[] = [];
      for (const edge of graph.results[id]?.edges ?? []) {
        const outgoing = edge.source === id;
        const otherId = outgoing ? edge.target : edge.source;
        const other = known.get(otherId);
        if (!other) continue; // not a record, or not one at the moment
        const reading = linkReading(
          roles,
          {
            sourceTopic: outgoing ? historyId : other.historyId,
            targetTopic: outgoing ? other.historyId : historyId,
            relationType: edge.relation_type[0]!,
          },
          outgoing,
        );
        list.push({
          name: readingText(reading),
          recordId: otherId,
          historyId: other.historyId,
          readableId: other.readableId,
          title: other.title,
          suspect: edge.outdated,
        });
      }
      list.sort(
        (a, b) =>
          a.name.localeCompare(b.name) ||
          (a.readableId ?? a.title ?? '').localeCompare(b.readableId ?? b.title ?? '', 'en', {
            numeric: true,
          }),
      );
      links.set(id, list);
    }
    return links;
  }

  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/topics/:id/document',
      {
        config: { permission: ['kt:read', 'records:read', 'traces:read'] satisfies Permission[] },
        schema: { params: Type.Object({ id: ObjectId }), querystring: DocumentQuery },
      },
      async (request): Promise<TopicDocument> => {
        const { principal } = signedIn(request);
        const asOf = await readAsOf(principal.tenantId, request.query.as_of, ['query', 'as_of']);
        // A document reads every record of its topic: it takes one of the expensive-read slots.
        return context.exportSlots.run(ExportSlots.userOf(principal), () =>
          topicDocument(principal, request.params.id, asOf),
        );
      },
    );
  };
}

/** A record in the document: its heading and its non-empty fields under their labels, in form order. */
async function documentRecord(
  identities: RecordIdentities,
  record: ServiceRecord,
  level: number,
  number: string,
): Promise<DocumentRecord> {
  const { readableId } = await identities.ofRecord(record);
  const mapped = await identities.maps.get(record.context.knowledge_unit_topic_id);
  const titleField = mapped && identities.identityOf(mapped.revision._id, mapped.map.fields).titleField;
  const labels = new Map(mapped?.map.fields.map((field) => [field.name, field.label || field.name]));
  const values = mapped ? displayValues(record, mapped.map) : [];
  // The title is the heading, whole; the other values are the record's paragraphs.
  const title = values.find((value) => value.name === titleField)?.text || record.name;
  return {
    id: record._id,
    level,
    number,
    readableId,
    title,
    fields: values
      .filter((value) => value.name !== titleField && value.text.trim() !== '')
      .map((value) => ({ label: labels.get(value.name) ?? value.name, text: value.text })),
    links: [],
  };
}

/** The least a row needs to be sorted as the records table sorts by readable id. */
function orderRow(record: ServiceRecord, readableId: string | null): RecordRow {
  return {
    id: record._id,
    name: record.name.slice(0, ORDER_KEY_CHARS),
    readableId: readableId?.slice(0, ORDER_KEY_CHARS) ?? null,
    version: '',
    createdAt: '',
    updatedAt: null,
    values: {},
    problems: 0,
  };
}

/** "1", "1.1", "1.2", "2", … for outline levels in document order (each at most one below the one before). */
export function outlineNumbers(levels: readonly number[]): string[] {
  const counters: number[] = [];
  return levels.map((level) => {
    counters.length = Math.min(counters.length, level);
    while (counters.length < level) counters.push(0);
    counters[level - 1]!++;
    return counters.join('.');
  });
}
