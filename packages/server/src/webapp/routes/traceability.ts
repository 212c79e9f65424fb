import { PassThrough } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Permission } from '@rxs/contract';
import { exportParts, MappingFileError } from '@rxs/exchange/export';
import { coverageHtml, coverageMarkdown, CoverageCollector, writeCoverageXlsx } from '@rxs/exchange';
import {
  CoverageBody,
  CoverageQuery,
  ReportBody,
  ReportQuery,
  type ReportFormat,
  type SuspectLinkView,
  type TraceabilityView,
} from '@rxs/web-api';
import { signedIn, type WebContext } from '../context.js';
import { ExportSlots } from '../../http/export-slots.js';
import { exportDataError } from './export-data-errors.js';
import {
  exportFileName,
  inProcessExportSource,
  checkMapping,
  mappingProblems,
  parseMapping,
  revisionIdList,
} from './export.js';

const CONTENT_TYPES: Record<ReportFormat, string> = {
  html: 'text/html; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/**
 * The traceability page: `GET /api/traceability?revisions=A,B` answers the coverage of
 * the topics in that order (the same rules, computed by the same sdk code, as `rxs trace-report`)
 * and the suspect links with their trace ids, for the review buttons; `GET
 * /api/traceability/report?revisions=&format=html|xlsx|md|json` downloads the report. With a
 * mapping file (its named links are the rules), the same as POST with a JSON body.
 */
export function traceabilityRoutes(context: WebContext): FastifyPluginAsync {
  const { services } = context;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const config = { permission: ['kt:read', 'records:read', 'traces:read'] satisfies Permission[] };

    /** The export procedure with traces, read into the coverage and the suspect links. */
    async function coverage(request: FastifyRequest, reply: FastifyReply, query: CoverageBody) {
      const { principal } = signedIn(request);
      const revisionIds = revisionIdList(query.revisions);
      const parsed = parseMapping(query.mapping);
      // Every revision first: a wrong id is a 404 naming it, before any work.
      const topics = await Promise.all(revisionIds.map((id) => services.techdoc.getRevision(principal, id)));
      checkMapping(parsed, topics);
      // The same procedure as a download, over whole topics: it takes one of the export slots
      // until the answer is sent (a report of many records is large to serialise, too).
      const release = context.exportSlots.take(ExportSlots.userOf(principal));
      reply.raw.once('close', release);
      const collector = new CoverageCollector();
      const suspect: SuspectLinkView[] = [];
      const baseUrl = `${request.protocol}://${request.host}`;
      const parts = exportParts(inProcessExportSource(services, principal, baseUrl), {
        revisionIds,
        traces: true,
        followLatest: true,
        mapping: parsed,
      });
      try {
        for await (const part of parts) {
          await collector.write(part);
          if (part.kind !== 'traces') continue;
          for (const trace of part.traces) {
            const { source, target } = trace;
            if (!trace.suspect || source.readableId === undefined || target.readableId === undefined)
              continue;
            suspect.push({
              traceId: trace.id,
              source: { id: source.id, readableId: source.readableId },
              target: { id: target.id, readableId: target.readableId },
              relationTypes: trace.relationTypes,
            });
          }
        }
      } catch (error) {
        // A mapping whose names do not fit these topics says so, as the export does; so does
        // data the procedure refuses (two records with one readable id, too many columns).
        if (error instanceof MappingFileError) throw mappingProblems(error);
        throw exportDataError(error) ?? error;
      }
      return { topics, report: collector.report(), suspect };
    }

    const view = async (
      request: FastifyRequest,
      reply: FastifyReply,
      query: CoverageBody,
    ): Promise<TraceabilityView> => {
      const { report, suspect } = await coverage(request, reply, query);
      return { report, suspect, generatedAt: new Date().toISOString() };
    };

    const download = async (request: FastifyRequest, reply: FastifyReply, query: ReportBody) => {
      const { topics, report } = await coverage(request, reply, query);
      const generatedAt = new Date().toISOString();
      const name = exportFileName(
        topics.map((t) => t.knowledge_topic_name),
        `traceability.${query.format}`,
      );
      void reply
        .header('content-type', CONTENT_TYPES[query.format])
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store');
      if (query.format === 'xlsx') {
        // Written to memory first: a failure is an error answer, never a broken file.
        const out = new PassThrough();
        const chunks: Buffer[] = [];
        out.on('data', (chunk: Buffer) => chunks.push(chunk));
        await writeCoverageXlsx(report, out);
        return reply.send(Buffer.concat(chunks));
      }
      if (query.format === 'html') return reply.send(coverageHtml(report, { generatedAt }));
      if (query.format === 'md') return reply.send(coverageMarkdown(report));
      return reply.send(`${JSON.stringify({ generatedAt, ...report }, null, 2)}\n`);
    };

    app.get('/traceability', { config, schema: { querystring: CoverageQuery } }, (request, reply) =>
      view(request, reply, request.query),
    );
    app.post('/traceability', { config, schema: { body: CoverageBody } }, (request, reply) =>
      view(request, reply, request.body),
    );
    app.get('/traceability/report', { config, schema: { querystring: ReportQuery } }, (request, reply) =>
      download(request, reply, request.query),
    );
    app.post('/traceability/report', { config, schema: { body: ReportBody } }, (request, reply) =>
      download(request, reply, request.body),
    );
  };
}
