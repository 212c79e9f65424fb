import { PassThrough } from 'node:stream';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  createWriter,
  EXPORT_FORMATS,
  exportParts,
  isObjectId,
  TRACE_BATCH_MAX_NODES,
  writeExport,
  type ExportFormat,
  type ExportSource,
  type ServiceRecord,
  type TraceEdge,
} from '@rxs/sdk';
import type { Services } from '../../app.js';
import { requirePermission, type Principal } from '../../auth/principal.js';
import { unprocessable, validationItem } from '../../http/errors.js';
import { signedIn, type WebContext } from '../context.js';

const MAX_TOPICS = 50;

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  reqif: 'application/xml; charset=utf-8',
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
): ExportSource {
  return {
    servers: { techdoc: baseUrl, records: baseUrl, tracer: baseUrl },
    getTopic: (revisionId) => services.techdoc.getRevision(principal, revisionId),
    async *listRecords(query) {
      const revisionId = query.context__knowledge_unit_topic_id;
      if (!revisionId) return;
      for await (const line of services.records.streamJsonLines(principal, { revisionIds: [revisionId] })) {
        yield JSON.parse(line) as ServiceRecord;
      }
    },
    async listTraces(nodes) {
      const edges: TraceEdge[] = [];
      for (let i = 0; i < nodes.length; i += TRACE_BATCH_MAX_NODES) {
        const batch = await services.tracer.batchList(principal, {
          nodes: nodes.slice(i, i + TRACE_BATCH_MAX_NODES),
          n_hops: 1,
          mode: 'legacy_connected_nodes',
        });
        for (const result of Object.values(batch.results)) edges.push(...result.edges);
      }
      return edges;
    },
  };
}

/** A file name safe in a Content-Disposition header and on every file system. */
export function exportFileName(topicNames: string[], extension: string, date = new Date()): string {
  const base =
    topicNames.length === 1
      ? topicNames[0]!
          .normalize('NFKD')
          .replace(/[^\w-]+/g, '-')
          .replace(/^-+|-+$/g, '')
          .toLowerCase() || 'topic'
      : `${topicNames.length}-topics`;
  return `rxs-${base}-${date.toISOString().slice(0, 10)}.${extension}`;
}

/** `GET /api/export`: downloads topics in a format, written by the sdk's export procedure and writers. */
export function exportRoutes(context: WebContext): FastifyPluginAsync {
  const { services } = context;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/export',
      {
        config: { permission: ['kt:read', 'records:read'] },
        schema: {
          querystring: Type.Object({
            revisions: Type.String({ minLength: 1, maxLength: 25 * MAX_TOPICS }),
            format: Type.Union(EXPORT_FORMATS.map((f) => Type.Literal(f))),
            traces: Type.Boolean({ default: false }),
            labels: Type.Boolean({ default: false }),
          }),
        },
      },
      async (request, reply) => {
        const { principal } = signedIn(request);
        const { format, traces, labels } = request.query;
        if (traces) requirePermission(principal, 'traces:read');
        const revisionIds = [...new Set(request.query.revisions.split(',').map((s) => s.trim()))].filter(
          Boolean,
        );
        const bad = revisionIds.find((id) => !isObjectId(id));
        if (bad !== undefined || revisionIds.length === 0 || revisionIds.length > MAX_TOPICS) {
          throw unprocessable([
            validationItem(
              ['query', 'revisions'],
              `A comma separated list of 1 to ${MAX_TOPICS} revision ids`,
              'value_error',
            ),
          ]);
        }
        // Every revision is checked before the first byte, so a wrong id is a 404, not a broken file.
        const topics = await Promise.all(
          revisionIds.map((id) => services.techdoc.getRevision(principal, id)),
        );
        const baseUrl = `${request.protocol}://${request.host}`;
        const out = new PassThrough();
        const writer = createWriter(format, out);
        const fileName = exportFileName(
          topics.map((t) => t.knowledge_topic_name),
          writer.extension,
        );
        const parts = exportParts(inProcessExportSource(services, principal, baseUrl), {
          revisionIds,
          traces,
          labels,
          followLatest: true,
        });
        writeExport(writer, parts).catch((error: unknown) => {
          request.log.error({ err: error }, 'export failed');
          out.destroy(error as Error); // the download fails visibly instead of ending short
        });
        void reply
          .header('content-type', CONTENT_TYPES[format])
          .header('content-disposition', `attachment; filename="${fileName}"`)
          .header('cache-control', 'no-store');
        return reply.send(out);
      },
    );
  };
}
