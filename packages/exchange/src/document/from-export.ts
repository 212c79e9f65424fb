import { PassThrough, type Writable } from 'node:stream';
import type { Baseline } from '@rxs/contract';
import { readingText, relationReading } from '@rxs/contract/plain';
import { ExportDataError } from '../export/errors.js';
import { sizeText } from '../export/limits.js';
import type {
  ExportedField,
  ExportedRecord,
  ExportedTopic,
  ExportPart,
  ExportWriter,
  LinkType,
  TraceEnd,
} from '../export/model.js';
import { cellText } from '../export/writers/cells.js';
import { closeOutput, writeChunk } from '../export/writers/output.js';
import { Spool } from '../export/writers/spool.js';
import { RECORD_NODE_TYPE, TraceRoles } from '../export/writers/traces.js';
import { CoverageCollector, ruleName, type CoverageOptions } from '../trace-report/coverage.js';
import type { CoverageReport, RuleCoverage } from '../trace-report/coverage-types.js';
import type {
  BaselineDocument,
  ChangeSummary,
  DocumentLinks,
  DocumentRecord,
  DocumentSignature,
  DocumentSubject,
  DocumentTopic,
  LinkedRecord,
  MatrixRow,
  TraceMatrix,
} from './model.js';

/**
 * A baseline document made from an export with traces: per topic its records as the export gives
 * them, with their fields by label and their links by role; a matrix and the coverage of each
 * coverage rule; the baseline's status and signatures. Records wait on disk, a spool per topic,
 * because a record's links are known only once the traces part came, and a matrix reads its
 * topic's records a second time. The change summary is the caller's to compute (`changes`).
 */

export const DOCUMENT_FORMATS = ['docx', 'pdf'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

export interface DocumentContext {
  /** Whose records these are, as the cover names it. */
  tenant: string;
  /** The baseline the export read (`GET /baselines/{id}`); without one, the records as they are now. */
  baseline?: Baseline;
  /** Which links the coverage counts (the tenant's trace model); the export's link types without. */
  coverage?: CoverageOptions;
  /** Where the spools go (the system's temporary folder when not given). */
  tempDir?: string;
  /**
   * The changes since the previous released baseline, computed by the caller; none: no such
   * section. A function is called once the export has ended, before the document is rendered: the
   * changes may then be compared from this very export as it passed.
   */
  changes?: ChangeSummary | (() => Promise<ChangeSummary>);
  /** Refuse records holding more text than this before rendering anything (none: no limit). */
  limits?: DocumentLimits;
  /** Clock of the "generated" moment, for reproducible documents in tests. */
  now?: () => Date;
}

/** How much record text a document may hold (the web app's budget for what one request renders). */
export interface DocumentLimits {
  /** Bytes of all records' values (UTF-16 code units of their JSON, about bytes for most text). */
  maxTextBytes: number;
  /** Bytes of one record's values. */
  maxRecordBytes: number;
}

/** The records hold more text than the document's limits allow: nothing was rendered. */
export class DocumentTooLargeError extends ExportDataError {
  override name = 'DocumentTooLargeError';
  override readonly code = 'RXS_ERR_DOCUMENT_TOO_LARGE';
}

/** What a required signer who has not signed yet shows in place of the moment of their signature. */
export const NOT_SIGNED_YET = 'not signed yet';

/** A baseline's signatures as a document shows them: those given, then the required ones still missing. */
export function baselineSignatures(baseline: Baseline): DocumentSignature[] {
  const given = baseline.signatures.map((s) => ({
    signer: s.email,
    meaning: s.meaning,
    signedAt: s.signed_at,
  }));
  const missing = baseline.required_signers
    .filter((r) => !baseline.signatures.some((s) => s.user_id === r.user_id && s.meaning === r.meaning))
    .map((r) => ({ signer: r.email, meaning: r.meaning, signedAt: NOT_SIGNED_YET }));
  return [...given, ...missing];
}

interface TopicSpool {
  topic: ExportedTopic;
  records: Spool<ExportedRecord>;
}

/** A record's links: per role name, the records at the other end, in trace order. */
type LinksByRole = Map<string, LinkedRecord[]>;

/** A trace end as a document names it: its readable id, else its id (and type, for what is no record). */
function endText(end: TraceEnd): string {
  if (end.type !== RECORD_NODE_TYPE) return `${end.type}/${end.id}`;
  // Only records of the export have a readable id: the reader is told why this one shows its id.
  return end.readableId ?? `record ${end.id} (not in this document)`;
}

/**
 * Each exported record's links, both ways: a role's trace reads by the role's forward name from its
 * `from` record and by its backward name from its `to` record; a trace without a role by its
 * mapping file link type (its incoming name from the target), else by its relation types as the
 * contract reads them from either end ("mentions" / "mentioned by").
 */
function linksOfRecords(part: Extract<ExportPart, { kind: 'traces' }>): Map<string, LinksByRole> {
  const roles = new TraceRoles();
  roles.add(part.roles ?? []);
  const incoming = new Map<string, string>(part.linkTypes.map((t: LinkType) => [t.name, t.incoming]));
  const byRecord = new Map<string, LinksByRole>();
  const add = (at: TraceEnd, role: string, other: TraceEnd, suspect: boolean) => {
    if (at.type !== RECORD_NODE_TYPE || at.readableId === undefined) return;
    const links = byRecord.get(at.id) ?? new Map<string, LinkedRecord[]>();
    byRecord.set(at.id, links);
    const records = links.get(role) ?? [];
    links.set(role, records);
    records.push({ readableId: endText(other), suspect });
  };
  for (const trace of part.traces) {
    const byRole = roles.of(trace);
    if (byRole) {
      add(byRole.from, byRole.role.forward_name, byRole.to, trace.suspect);
      add(byRole.to, byRole.role.backward_name, byRole.from, trace.suspect);
      continue;
    }
    // A mapping file's link type by its names; else each relation type as record pages read it.
    const readings = (outgoing: boolean) =>
      trace.relationTypes.map((type) => readingText(relationReading(type, outgoing))).join(', ');
    const [outgoing, incomingName] =
      trace.linkType === undefined
        ? [readings(true), readings(false)]
        : [trace.linkType, incoming.get(trace.linkType) ?? trace.linkType];
    add(trace.source, outgoing, trace.target, trace.suspect);
    add(trace.target, incomingName, trace.source, trace.suspect);
  }
  return byRecord;
}

/** A record's title as a document shows it: its topic's title field as text, else its name. */
export function recordTitle(record: ExportedRecord, topic: ExportedTopic): string {
  const titleField = topic.presentation.titleField;
  return cellText(titleField === undefined ? undefined : record.values[titleField]) || record.name;
}

/** A field as a document names it: its label, else its semantic name. */
export function fieldLabel(field: ExportedField): string {
  return field.label ?? field.name;
}

function documentRecord(
  record: ExportedRecord,
  topic: ExportedTopic,
  links: LinksByRole | undefined,
): DocumentRecord {
  const fields = topic.fields
    .map((field) => ({ label: fieldLabel(field), value: cellText(record.values[field.name]) }))
    .filter((field) => field.value !== '');
  const byRole: DocumentLinks[] = [...(links ?? [])].map(([role, records]) => ({ role, records }));
  return { readableId: record.readableId, title: recordTitle(record, topic), fields, links: byRole };
}

/** What a change summary names a record by, as the rest of the document names it. */
export interface RecordName {
  readableId: string;
  title: string;
}

/**
 * The readable id and title of every record of an export as it passes (an export consumer), kept
 * on disk, not in memory: a change summary looks up the few it lists once the export has ended.
 * Also each topic's field labels by semantic name (by topic history id: a re-approval keeps it).
 */
export class RecordNames {
  private readonly spool: Spool<[id: string, readableId: string, title: string]>;
  private readonly labels = new Map<string, Map<string, string>>();
  private topic: ExportedTopic | undefined;

  constructor(tempDir?: string) {
    this.spool = new Spool(tempDir);
  }

  async write(part: ExportPart): Promise<void> {
    if (part.kind === 'topic') this.topic = part.topic;
    else if (part.kind === 'record' && this.topic)
      await this.spool.append([part.record.id, part.record.readableId, recordTitle(part.record, this.topic)]);
    else if (part.kind === 'topic-end')
      this.labels.set(
        part.topic.historyId,
        new Map(part.topic.fields.map((field) => [field.name, fieldLabel(field)])),
      );
  }

  async writeParts(parts: readonly ExportPart[]): Promise<void> {
    for (const part of parts) await this.write(part);
  }

  /** The label of a topic's field by its semantic name; none when the topic has no such field. */
  label(topicHistoryId: string, fieldName: string): string | undefined {
    return this.labels.get(topicHistoryId)?.get(fieldName);
  }

  /** The names of these records (by id), read back from disk; ids the export did not have are left out. */
  async find(ids: ReadonlySet<string>): Promise<Map<string, RecordName>> {
    const found = new Map<string, RecordName>();
    if (ids.size === 0) return found;
    for await (const [id, readableId, title] of this.spool.replay())
      if (ids.has(id)) found.set(id, { readableId, title });
    return found;
  }

  dispose(): Promise<void> {
    return this.spool.dispose();
  }
}

/** A rule's matrix: the source topic's records (read again from its spool) against the rule's link. */
function ruleMatrix(rule: RuleCoverage, spool: TopicSpool): TraceMatrix {
  const suspect = new Set(rule.suspect.map(([s, t]) => `${s}\u0000${t}`));
  const linked = new Map<string, LinkedRecord[]>();
  for (const [source, target] of rule.links) {
    const cell = linked.get(source) ?? [];
    linked.set(source, cell);
    cell.push({ readableId: target, suspect: suspect.has(`${source}\u0000${target}`) });
  }
  async function* rows(): AsyncIterable<MatrixRow> {
    for await (const record of spool.records.replay())
      yield { readableId: record.readableId, cells: [linked.get(record.readableId) ?? []] };
  }
  return {
    title: ruleName(rule.rule),
    rowHeader: rule.rule.source.name,
    columns: [
      rule.rule.linkType ? `${rule.rule.linkType} (${rule.rule.target.name})` : rule.rule.target.name,
    ],
    rows: rows(),
  };
}

/**
 * An export writer that renders the export as a DOCX or PDF baseline document on close. The export
 * must carry traces (`ExportOptions.traces`): without them every record shows no links.
 */
export class DocumentWriter implements ExportWriter {
  readonly extension: DocumentFormat;
  private readonly topics: TopicSpool[] = [];
  private readonly coverage: CoverageCollector;
  private links = new Map<string, LinksByRole>();
  private exportedAt = '';
  /** Record text met so far (`checkSize`). */
  private textBytes = 0;
  private ended = false;

  constructor(
    readonly format: DocumentFormat,
    private readonly out: Writable,
    private readonly context: DocumentContext,
  ) {
    this.extension = format;
    this.coverage = new CoverageCollector(context.coverage);
  }

  async writeParts(parts: readonly ExportPart[]): Promise<void> {
    for (const part of parts) await this.write(part);
  }

  async write(part: ExportPart): Promise<void> {
    await this.coverage.write(part);
    if (part.kind === 'header') this.exportedAt = part.header.exportedAt;
    else if (part.kind === 'topic')
      this.topics.push({ topic: part.topic, records: new Spool(this.context.tempDir) });
    else if (part.kind === 'record') {
      this.checkSize(part.record);
      await this.current().records.append(part.record);
    }
    // The topic as it ends holds the fields met only in record data too.
    else if (part.kind === 'topic-end') this.current().topic = part.topic;
    else if (part.kind === 'traces') this.links = linksOfRecords(part);
    else if (part.kind === 'end') this.ended = true;
  }

  close(): Promise<void> {
    return closeOutput(
      this.out,
      this.ended,
      () => this.render(),
      async () => {
        for (const { records } of this.topics) await records.dispose();
      },
    );
  }

  /**
   * The renderers pipe into a stream of their own, copied on to `out` as it takes it: a pipe never
   * ends standard output, so a renderer piping into it would wait for its end forever.
   */
  private async render(): Promise<void> {
    const through = new PassThrough();
    const copied = (async () => {
      for await (const chunk of through) await writeChunk(this.out, chunk as Buffer);
    })();
    try {
      const { changes } = this.context;
      const document = this.document(
        this.coverage.report(),
        typeof changes === 'function' ? await changes() : changes,
      );
      // The renderers (pdfkit, fontkit, the fonts) load only when a document is written.
      const render =
        this.format === 'pdf' ? (await import('./pdf.js')).renderPdf : (await import('./docx.js')).renderDocx;
      await render(document, through);
    } catch (error) {
      copied.catch(() => {});
      through.destroy(error as Error);
      throw error;
    }
    await copied;
  }

  /** The limits, checked as records arrive: a document too large is refused before any rendering. */
  private checkSize(record: ExportedRecord): void {
    const { limits } = this.context;
    if (!limits) return;
    const bytes = JSON.stringify(record.values).length;
    this.textBytes += bytes;
    if (bytes > limits.maxRecordBytes)
      throw new DocumentTooLargeError(
        `Record ${record.readableId} holds ${sizeText(bytes)} of text, more than the ${sizeText(limits.maxRecordBytes)} a record may hold in a document made here. Make the document with rxs export --format pdf|docx, which has no such limit.`,
      );
    if (this.textBytes > limits.maxTextBytes)
      throw new DocumentTooLargeError(
        `The records hold more than ${sizeText(limits.maxTextBytes)} of text, more than a document made here may hold. Make the document with rxs export --format pdf|docx, which has no such limit, or of fewer topics.`,
      );
  }

  private current(): TopicSpool {
    const topic = this.topics.at(-1);
    if (!topic) throw new Error('An export part came before its topic.');
    return topic;
  }

  private subject(): DocumentSubject {
    const { baseline } = this.context;
    return baseline
      ? { kind: 'baseline', name: baseline.name, moment: baseline.at, status: baseline.status }
      : { kind: 'now', moment: this.exportedAt };
  }

  private document(report: CoverageReport, changes: ChangeSummary | undefined): BaselineDocument {
    const links = this.links;
    const topics: DocumentTopic[] = this.topics.map(({ topic, records }) => ({
      name: topic.name,
      records: (async function* () {
        for await (const record of records.replay())
          yield documentRecord(record, topic, links.get(record.id));
      })(),
    }));
    const spoolOf = new Map(this.topics.map((spool) => [spool.topic.revisionId, spool]));
    const matrices = report.rules.flatMap((rule) => {
      const spool = spoolOf.get(rule.rule.source.revisionId);
      return spool ? [ruleMatrix(rule, spool)] : [];
    });
    return {
      tenant: this.context.tenant,
      subject: this.subject(),
      generatedAt: (this.context.now ?? (() => new Date()))().toISOString(),
      signatures: this.context.baseline ? baselineSignatures(this.context.baseline) : [],
      topics,
      matrices,
      coverage: report.rules.map((r) => ({
        rule: ruleName(r.rule),
        covered: r.covered,
        total: r.total,
        percent: Math.round(r.percent * 10) / 10,
        uncovered: r.uncovered,
      })),
      ...(changes && { changes }),
    };
  }
}
