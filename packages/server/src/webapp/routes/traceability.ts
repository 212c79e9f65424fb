import { PassThrough } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { traceChainRevisions, type Permission, type TraceRole } from '@rxs/contract';
import { exportParts, MappingFileError } from '@rxs/exchange/export';
import { coverageHtml, coverageMarkdown, CoverageCollector, writeCoverageXlsx } from '@rxs/exchange';
import {
  CoverageBody,
  CoverageQuery,
  ReportBody,
  ReportQuery,
  type MatrixRecord,
  type ReportFormat,
  type SuspectLinkView,
  type TraceabilityView,
} from '@rxs/web-api';
import type { Principal } from '../../auth/principal.js';
import { unprocessable, validationItem } from '../../http/errors.js';
import { signedIn, type WebContext } from '../context.js';
import { RecordIdentity } from '../record-table.js';
import { traceabilityViewRoutes } from './traceability-views.js';
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

type Report = TraceabilityView['report'];

/** What a coverage is taken of: topic revisions in order, the model's roles that are rules. */
interface CoverageScope {
  revisionIds: string[];
  roles: TraceRole[];
  /** Whether consecutive topics without a role between them are a rule too (topics chosen, not the model's). */
  consecutive: boolean;
}

/**
 * What the query names, as `rxs trace-report` reads its options: topics (`revisions`), each role of
 * the tenant's trace model between two of them a rule and consecutive topics without one a rule
 * too; or roles of the model (`roles`, in that order), or with neither the whole model: its topics
 * in the order of the V at their current revisions, each role a rule and no other. A mapping file
 * replaces the model, so it needs topics.
 */
function scopeOf(query: CoverageBody, model: readonly TraceRole[]): CoverageScope {
  const at = (field: string, msg: string) =>
    unprocessable([validationItem(['query', field], msg, 'value_error')]);
  if (query.revisions !== undefined) {
    if (query.roles !== undefined) throw at('roles', 'Name either topics (revisions) or roles, not both');
    return {
      revisionIds: revisionIdList(query.revisions),
      roles: query.mapping?.trim() ? [] : [...model],
      consecutive: true,
    };
  }
  if (query.mapping?.trim())
    throw at('revisions', 'A mapping file names links between topics: choose the topics');
  let roles = [...model];
  if (query.roles !== undefined) {
    const byId = new Map(model.map((role) => [role.id, role]));
    const ids = [...new Set(query.roles.split(',').map((id) => id.trim()))].filter(Boolean);
    const unknown = ids.filter((id) => !byId.has(id));
    if (unknown.length > 0 || ids.length === 0)
      throw at(
        'roles',
        `The trace model has no role ${unknown.map((id) => `"${id}"`).join(', ') || 'named'}`,
      );
    roles = ids.map((id) => byId.get(id)!);
  }
  const chain = traceChainRevisions(roles);
  if ('unapproved' in chain)
    throw at(
      'roles',
      `The trace model's topic ${chain.unapproved.name ?? chain.unapproved.historyId} has no approved revision yet: choose the topics instead`,
    );
  const { revisionIds } = chain;
  return { revisionIds, roles, consecutive: false };
}

/** The role a rule of the model counts: from its `to` topic to its `from` topic, named by its backward name. */
function roleOfRule(roles: readonly TraceRole[], rule: Report['rules'][number]['rule']): string | null {
  const role = roles.find(
    (r) =>
      r.to.topic_history_id === rule.source.historyId &&
      r.from.topic_history_id === rule.target.historyId &&
      r.backward_name === rule.linkType,
  );
  return role?.id ?? null;
}

/**
 * The traceability page: `GET /api/traceability` answers the coverage of the tenant's trace model
 * (`?roles=a,b` of some of its roles, `?revisions=A,B` of topics in that order; the same rules,
 * computed by the same sdk code, as `rxs trace-report`), the suspect links with their trace ids for
 * the review buttons, and the records' ids and titles for the matrix; `GET
 * /api/traceability/report?...&format=html|xlsx|md|json` downloads the report. With a mapping file
 * (its named links are the rules), the same as POST with a JSON body. Saved views: traceability-views.ts.
 */
export function traceabilityRoutes(context: WebContext): FastifyPluginAsync {
  const { services } = context;
  return async (fastify) => {
    await fastify.register(traceabilityViewRoutes(context));
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const config = { permission: ['kt:read', 'records:read', 'traces:read'] satisfies Permission[] };

    /** The tenant's trace model's roles (none where the tracer keeps no model). */
    const modelRoles = async (principal: Principal) => (await services.tracer.model.get(principal)).roles;

    /** The export procedure with traces, read into the coverage, the suspect links and the records. */
    async function coverage(request: FastifyRequest, reply: FastifyReply, query: CoverageBody) {
      const { principal } = signedIn(request);
      const { revisionIds, roles, consecutive } = scopeOf(query, await modelRoles(principal));
      if (revisionIds.length === 0)
        return { topics: [], report: { topics: [], rules: [] }, suspect: [], records: {}, ruleRoles: [] };
      const parsed = parseMapping(query.mapping);
      // Every revision first: a wrong id is a 404 naming it, before any work.
      const topics = await Promise.all(revisionIds.map((id) => services.techdoc.getRevision(principal, id)));
      checkMapping(parsed, topics);
      // The same procedure as a download, over whole topics: it takes one of the export slots
      // until the answer is sent (a report of many records is large to serialise, too).
      const release = context.exportSlots.take(ExportSlots.userOf(principal));
      reply.raw.once('close', release);
      const collector = new CoverageCollector(roles.length > 0 ? { model: roles, consecutive } : {});
      const suspect: SuspectLinkView[] = [];
      const records: Record<string, Record<string, MatrixRecord>> = {};
      const identities = new Map<string, RecordIdentity>();
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
          if (part.kind === 'topic') {
            identities.set(part.topic.revisionId, new RecordIdentity(part.topic.fields));
            records[part.topic.revisionId] = {};
          } else if (part.kind === 'record') {
            const { id, readableId, topicRevisionId, values } = part.record;
            const byReadableId = records[topicRevisionId];
            if (byReadableId)
              byReadableId[readableId] = {
                id,
                title: identities.get(topicRevisionId)?.title(values) ?? null,
              };
          }
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
      const report = collector.report();
      const ruleRoles = report.rules.map((r) => roleOfRule(roles, r.rule));
      return { topics, report, suspect, records, ruleRoles };
    }

    const view = async (
      request: FastifyRequest,
      reply: FastifyReply,
      query: CoverageBody,
    ): Promise<TraceabilityView> => {
      const { report, suspect, records, ruleRoles } = await coverage(request, reply, query);
      return { report, suspect, ruleRoles, records, generatedAt: new Date().toISOString() };
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
