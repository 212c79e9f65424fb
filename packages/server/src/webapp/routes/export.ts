import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  isObjectId,
  ObjectId,
  TRACE_BATCH_MAX_NODES,
  TRACE_BATCH_TOO_LARGE,
  type BatchRetrieveNode,
  type KnowledgeTopicRevision,
  type Permission,
  type TraceEdge,
} from '@rxs/contract';
import {
  buildFieldMap,
  createWriter,
  exportMappingFromText,
  exportParts,
  MappingFileError,
  makeScratchFolder,
  traceRolesAsOf,
  writeExport,
  type ExportFormat,
  type ExportMapping,
  type ExportSource,
  type ExportWriter,
} from '@rxs/exchange/export';
import { BaselineDocumentQuery, ExportBody, ExportQuery, MAX_EXPORT_TOPICS } from '@rxs/web-api';
import type { Services } from '../../services/index.js';
import { requirePermission, type Principal } from '../../auth/principal.js';
import { HttpError, unprocessable, validationItem } from '../../http/errors.js';
import { signedIn, type WebContext } from '../context.js';
import { ExportSlots } from '../../http/export-slots.js';
import { recordsInPages } from '../record-pages.js';
import { exportDataError } from './export-data-errors.js';
import { DOCUMENT_CONTENT_TYPES, documentWriterFor, isDocumentFormat } from '../document-download.js';

/** The end of each format's file name: Sphinx-Needs is JSON too, so it is told apart from the JSON export. */
const FILE_SUFFIXES: Record<ExportFormat, string> = {
  csv: 'csv',
  xlsx: 'xlsx',
  reqif: 'reqif',
  reqifz: 'reqifz',
  needs: 'needs.json',
  json: 'json',
  jsonl: 'jsonl',
};

/** Response header with the writer's warnings (values cut or changed), as URI-encoded JSON. */
export const EXPORT_WARNINGS_HEADER = 'x-rxs-export-warnings';
/** Header values stay well under proxies' limits; the rest of the warnings is counted. */
const MAX_WARNINGS_HEADER = 6_000;

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  reqif: 'application/xml; charset=utf-8',
  reqifz: 'application/zip',
  needs: 'application/json; charset=utf-8',
  json: 'application/json; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/**
 * The export procedure's three sources, served in-process by the services with the signed-in
 * user's principal: the same data the HTTP API would answer, without a loop through HTTP.
 */
export function inProcessExportSource(
  services: Services,
  principal: Principal,
  baseUrl: string,
  /** Read everything as it was at this moment (normalised, see history/as-of.ts). */
  asOf?: string,
): ExportSource {
  return {
    servers: { techdoc: baseUrl, records: baseUrl, tracer: baseUrl },
    getTopic: (revisionId) => services.techdoc.getRevision(principal, revisionId, { asOf }),
    async *listRecords(query) {
      const revisionId = query.context__knowledge_unit_topic_id;
      if (!revisionId) return;
      // A few MB at a time: a topic of large records is never in memory at once.
      yield* recordsInPages(services.records, principal, {
        revisionIds: [revisionId],
        asOf: query.as_of ?? asOf,
      });
    },
    async listTraces(nodes) {
      const edges: TraceEdge[] = [];
      // A batch whose answer passes the edge limit is asked again in halves, as the sdk client does.
      const collect = async (batch: BatchRetrieveNode[]): Promise<void> => {
        try {
          const answer = await services.tracer.batchList(
            principal,
            { nodes: batch, n_hops: 1, mode: 'legacy_connected_nodes' },
            { asOf },
          );
          for (const result of Object.values(answer.results)) edges.push(...result.edges);
        } catch (error) {
          if (batch.length < 2 || !isAnswerTooLarge(error)) throw error;
          const half = Math.ceil(batch.length / 2);
          await collect(batch.slice(0, half));
          await collect(batch.slice(half));
        }
      };
      for (let i = 0; i < nodes.length; i += TRACE_BATCH_MAX_NODES)
        await collect(nodes.slice(i, i + TRACE_BATCH_MAX_NODES));
      return edges;
    },
    getOutline: (historyId) => services.outlines.get(principal, historyId),
    getTraceRoles: async () =>
      asOf === undefined
        ? (await services.tracer.model.get(principal)).roles
        : await traceRolesAsOf(asOf, ({ limit, before }) =>
            services.tracer.model.history(principal, limit, before),
          ),
  };
}

/** A mapping file's text as a mapping (none when blank); its mistakes are a 422, one item each. */
export function parseMapping(text: string | undefined): ExportMapping | undefined {
  if (!text?.trim()) return undefined;
  try {
    return exportMappingFromText(text, 'mapping file');
  } catch (error) {
    if (error instanceof MappingFileError) throw mappingProblems(error);
    throw error;
  }
}

/** The mapping's names checked against the topics' fields: a wrong one is a 422 naming it. */
export function checkMapping(
  mapping: ExportMapping | undefined,
  topics: readonly KnowledgeTopicRevision[],
): void {
  for (const topic of topics) {
    const ref = { historyId: topic.knowledge_topic_history_id, name: topic.knowledge_topic_name };
    try {
      mapping?.topic(ref, buildFieldMap(topic.knowledge_topic_schema).fields);
    } catch (error) {
      if (error instanceof MappingFileError) throw mappingProblems(error);
      throw error;
    }
  }
}

/** `revisions=ID,ID`: distinct revision ids, 1 to MAX_EXPORT_TOPICS of them, else 422. */
export function revisionIdList(text: string): string[] {
  const revisionIds = [...new Set(text.split(',').map((s) => s.trim()))].filter(Boolean);
  const bad = revisionIds.find((id) => !isObjectId(id));
  if (bad !== undefined || revisionIds.length === 0 || revisionIds.length > MAX_EXPORT_TOPICS) {
    throw unprocessable([
      validationItem(
        ['query', 'revisions'],
        `A comma separated list of 1 to ${MAX_EXPORT_TOPICS} revision ids`,
        'value_error',
      ),
    ]);
  }
  return revisionIds;
}

function isAnswerTooLarge(error: unknown): boolean {
  return (
    error instanceof HttpError &&
    Array.isArray(error.detail) &&
    error.detail.some((item) => item.type === TRACE_BATCH_TOO_LARGE)
  );
}

/**
 * A file name safe in a Content-Disposition header and on every file system; `suffix` is the
 * format's ending (`csv`, `needs.json`, ...).
 */
export function exportFileName(topicNames: string[], suffix: string, date = new Date()): string {
  const base =
    topicNames.length === 1
      ? topicNames[0]!
          .normalize('NFKD')
          .replace(/[^\w-]+/g, '-')
          .replace(/^-+|-+$/g, '')
          .toLowerCase() || 'topic'
      : `${topicNames.length}-topics`;
  return `rxs-${base}-${date.toISOString().slice(0, 10)}.${suffix}`;
}

/** The warnings as a header value: URI-encoded JSON, as many as fit, then how many were left out. */
export function warningsHeader(warnings: readonly string[]): string {
  const encode = (list: string[]) => encodeURIComponent(JSON.stringify(list));
  const more = (count: number) => `…and ${count} more (the file's own report lists them all).`;
  const kept: string[] = [];
  for (const warning of warnings) {
    const left = warnings.length - kept.length - 1;
    if (encode([...kept, warning, ...(left > 0 ? [more(left)] : [])]).length > MAX_WARNINGS_HEADER) break;
    kept.push(warning);
  }
  const left = warnings.length - kept.length;
  return encode(left > 0 ? [...kept, more(left)] : kept);
}

/** What the user sees when an export fails after its revisions were checked. */
function exportFailure(error: unknown, requestId: string): HttpError {
  const dataError = exportDataError(error);
  if (dataError) return dataError;
  return new HttpError(
    500,
    `The export failed and no file was sent. Try again; if it fails again, give an administrator ` +
      `the request id ${requestId} to find the cause in the server log.`,
  );
}

/** A mapping file's mistakes as 422 items, one per mistake, at its place in the file. */
export function mappingProblems(error: MappingFileError) {
  return unprocessable(
    error.problems.map((p) =>
      validationItem(['body', 'mapping', p.place], `Mapping file: ${p.message}`, 'value_error'),
    ),
  );
}

/**
 * `GET /api/export`: downloads topics in a format, written by the sdk's export procedure and
 * writers; `POST /api/export` takes the same in a JSON body, with a mapping file's text.
 */
export function exportRoutes(context: WebContext): FastifyPluginAsync {
  const { services, exportSlots: slots } = context;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const config = { permission: ['kt:read', 'records:read'] satisfies Permission[] };

    app.get('/export', { config, schema: { querystring: ExportQuery } }, (request, reply) =>
      download(request, reply, request.query, 'query'),
    );
    app.post(
      '/export',
      {
        config,
        schema: { body: ExportBody },
      },
      (request, reply) => download(request, reply, request.body, 'body'),
    );

    async function download(
      request: FastifyRequest,
      reply: FastifyReply,
      query: ExportBody,
      place: 'query' | 'body',
    ) {
      const { principal } = signedIn(request);
      const { format, links_by } = query;
      const isDocument = isDocumentFormat(format);
      // A document always shows the links, by role, and values by their labels.
      const traces = query.traces || isDocument;
      const labels = query.labels || isDocument;
      if (traces) requirePermission(principal, 'traces:read');
      const mapping = parseMapping(query.mapping);
      const revisionIds = revisionIdList(query.revisions);
      const asOf = await services.readAsOf(principal.tenantId, query.as_of, [place, 'as_of']);
      // Every revision is checked before the first byte, so a wrong id is a 404, not a broken file.
      const topics = await Promise.all(
        revisionIds.map((id) => services.techdoc.getRevision(principal, id, { asOf })),
      );
      // The mapping's field names too: a wrong one is a 422 naming it, not a broken download.
      checkMapping(mapping, topics);
      const source = inProcessExportSource(services, principal, baseUrlOf(request), asOf);
      const procedureWarnings: string[] = [];
      const parts = exportParts(source, {
        revisionIds,
        traces,
        ...(links_by !== undefined && { linksBy: links_by }),
        labels,
        followLatest: true,
        mapping,
        onWarning: (message) => procedureWarnings.push(message),
        // As of a moment, the header says that moment: the file equals the export taken then.
        ...(asOf === undefined ? {} : { now: () => new Date(asOf) }),
      });
      const fileName = exportFileName(
        topics.map((t) => t.knowledge_topic_name),
        isDocument ? format : FILE_SUFFIXES[format],
        asOf === undefined ? undefined : new Date(asOf),
      );
      return sendExportFile(request, reply, principal, {
        fileName,
        contentType: isDocument ? DOCUMENT_CONTENT_TYPES[format] : CONTENT_TYPES[format],
        parts,
        procedureWarnings,
        prepareWriter: isDocument
          ? () =>
              documentWriterFor(format, {
                services,
                principal,
                source,
                state: { revisionIds, asOf },
                mapping,
              })
          : async () => (out, tempDir) => createWriter(format, out, { tempDir, fileName }),
      });
    }

    /**
     * `GET /api/baselines/{id}/document?format=pdf|docx`: the baseline as a document, as
     * `rxs export --baseline ID --format pdf|docx` makes it, with its changes since the previous
     * released baseline. Its records and traces as of its moment, which needs traces:read.
     */
    app.get(
      '/baselines/:id/document',
      {
        config: { permission: ['kt:read', 'records:read', 'traces:read'] satisfies Permission[] },
        schema: { params: Type.Object({ id: ObjectId }), querystring: BaselineDocumentQuery },
      },
      async (request, reply) => {
        const { principal } = signedIn(request);
        const { format } = request.query;
        const baseline = await services.baselines.get(principal, request.params.id);
        const asOf = baseline.at;
        const source = inProcessExportSource(services, principal, baseUrlOf(request), asOf);
        const procedureWarnings: string[] = [];
        const parts = exportParts(source, {
          revisionIds: [...new Set(baseline.knowledge_topic_revision_ids)],
          traces: true,
          labels: true,
          followLatest: true,
          onWarning: (message) => procedureWarnings.push(message),
          now: () => new Date(asOf),
        });
        return sendExportFile(request, reply, principal, {
          fileName: exportFileName([baseline.name], format, new Date(asOf)),
          contentType: DOCUMENT_CONTENT_TYPES[format],
          parts,
          procedureWarnings,
          prepareWriter: () =>
            documentWriterFor(format, {
              services,
              principal,
              source,
              state: { baseline },
              mapping: undefined,
            }),
        });
      },
    );

    /**
     * Writes a download's whole file before the status is sent, holding an export slot: a failure
     * is a visible error, never a 200 with a broken file (an XLSX or a PDF cannot be checked until
     * its last byte). Then sends the file and removes it.
     */
    async function sendExportFile(
      request: FastifyRequest,
      reply: FastifyReply,
      principal: Principal,
      download: {
        fileName: string;
        contentType: string;
        parts: ReturnType<typeof exportParts>;
        procedureWarnings: readonly string[];
        /** Reads what the writer needs besides the parts (a document's change summary), under the slot. */
        prepareWriter: () => Promise<(out: Writable, tempDir: string) => ExportWriter>;
      },
    ) {
      const { fileName } = download;
      const release = slots.take(ExportSlots.userOf(principal));
      // What the writer reads besides the parts answers its own errors (a 404 stays a 404).
      const writerOn = await download.prepareWriter().catch((error: unknown) => {
        release();
        throw error;
      });
      // A server killed while writing leaves its folder to the next export, which removes it.
      const dir = await makeScratchFolder('rxs-web-export').catch((error: unknown) => {
        release();
        throw error;
      });
      const file = join(dir, fileName);
      let warnings: readonly string[];
      let size: number;
      try {
        const writer = writerOn(createWriteStream(file), dir);
        await writeExport(writer, download.parts);
        warnings = [...download.procedureWarnings, ...(writer.warnings ?? [])];
        size = (await stat(file)).size;
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        request.log.error({ err: error }, 'export failed');
        throw exportFailure(error, request.id);
      } finally {
        // Sending the finished file is cheap; the slot was for writing it.
        release();
      }
      const body = createReadStream(file);
      body.once('close', () => void rm(dir, { recursive: true, force: true }));
      void reply
        .header('content-type', download.contentType)
        .header('content-disposition', `attachment; filename="${fileName}"`)
        .header('content-length', size)
        .header('cache-control', 'no-store');
      if (warnings.length > 0) void reply.header(EXPORT_WARNINGS_HEADER, warningsHeader(warnings));
      return reply.send(body);
    }
  };
}

function baseUrlOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}
