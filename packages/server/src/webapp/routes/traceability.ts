import { PassThrough } from 'node:stream';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  coverageHtml,
  coverageMarkdown,
  CoverageCollector,
  exportParts,
  writeCoverageXlsx,
  type Permission,
} from '@rxs/sdk';
import type { Principal } from '../../auth/principal.js';
import type { SuspectLinkView, TraceabilityView } from '../api-types.js';
import { signedIn, type WebContext } from '../context.js';
import { exportFileName, inProcessExportSource, MAX_REVISIONS_TEXT, revisionIdList } from './export.js';

const REPORT_FORMATS = ['html', 'xlsx', 'md', 'json'] as const;
type ReportFormat = (typeof REPORT_FORMATS)[number];

const CONTENT_TYPES: Record<ReportFormat, string> = {
  html: 'text/html; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/**
 * The traceability page (issue 16): `GET /api/traceability?revisions=A,B` answers the coverage of
 * the topics in that order (the same rules, computed by the same sdk code, as `rxs trace-report`)
 * and the suspect links with their trace ids, for the review buttons; `GET
 * /api/traceability/report?revisions=&format=html|xlsx|md|json` downloads the report.
 */
export function traceabilityRoutes(context: WebContext): FastifyPluginAsync {
  const { services } = context;
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const config = { permission: ['kt:read', 'records:read', 'traces:read'] satisfies Permission[] };
    const revisions = Type.String({ minLength: 1, maxLength: MAX_REVISIONS_TEXT });

    /** The export procedure with traces, read into the coverage and the suspect links. */
    async function coverage(principal: Principal, baseUrl: string, revisionIds: string[]) {
      // Every revision first: a wrong id is a 404 naming it, before any work.
      const topics = await Promise.all(revisionIds.map((id) => services.techdoc.getRevision(principal, id)));
      const collector = new CoverageCollector();
      const suspect: SuspectLinkView[] = [];
      const parts = exportParts(inProcessExportSource(services, principal, baseUrl), {
        revisionIds,
        traces: true,
        followLatest: true,
      });
      for await (const part of parts) {
        await collector.write(part);
        if (part.kind !== 'traces') continue;
        for (const trace of part.traces) {
          const { source, target } = trace;
          if (!trace.suspect || source.readableId === undefined || target.readableId === undefined) continue;
          suspect.push({
            traceId: trace.id,
            source: { id: source.id, readableId: source.readableId },
            target: { id: target.id, readableId: target.readableId },
            relationTypes: trace.relationTypes,
          });
        }
      }
      return { topics, report: collector.report(), suspect };
    }

    app.get(
      '/traceability',
      { config, schema: { querystring: Type.Object({ revisions }) } },
      async (request): Promise<TraceabilityView> => {
        const { principal } = signedIn(request);
        const revisionIds = revisionIdList(request.query.revisions);
        const { report, suspect } = await coverage(
          principal,
          `${request.protocol}://${request.host}`,
          revisionIds,
        );
        return { report, suspect, generatedAt: new Date().toISOString() };
      },
    );

    app.get(
      '/traceability/report',
      {
        config,
        schema: {
          querystring: Type.Object({
            revisions,
            format: Type.Union(REPORT_FORMATS.map((f) => Type.Literal(f))),
          }),
        },
      },
      async (request, reply) => {
        const { principal } = signedIn(request);
        const revisionIds = revisionIdList(request.query.revisions);
        const format = request.query.format;
        const { topics, report } = await coverage(
          principal,
          `${request.protocol}://${request.host}`,
          revisionIds,
        );
        const generatedAt = new Date().toISOString();
        const name = exportFileName(
          topics.map((t) => t.knowledge_topic_name),
          `traceability.${format}`,
        );
        void reply
          .header('content-type', CONTENT_TYPES[format])
          .header('content-disposition', `attachment; filename="${name}"`)
          .header('cache-control', 'no-store');
        if (format === 'xlsx') {
          // Written to memory first: a failure is an error answer, never a broken file.
          const out = new PassThrough();
          const chunks: Buffer[] = [];
          out.on('data', (chunk: Buffer) => chunks.push(chunk));
          await writeCoverageXlsx(report, out);
          return reply.send(Buffer.concat(chunks));
        }
        if (format === 'html') return reply.send(coverageHtml(report, { generatedAt }));
        if (format === 'md') return reply.send(coverageMarkdown(report));
        return reply.send(`${JSON.stringify({ generatedAt, ...report }, null, 2)}\n`);
      },
    );
  };
}
