import type { ExportedTrace } from '@rxs/exchange/export';
import type { ChangeReport, FieldChange, RecordChange, SchemaChanges, TopicChanges } from './report.js';

export interface RenderOptions {
  /** Entries shown per list (records added, removed, changed of a topic; traces ...); default 20. */
  maxItems?: number;
  /** Longest rendering of one value before it is cut; default 80 characters. */
  maxValueLength?: number;
}

/**
 * The report as short text for a terminal or a log: one summary line, then per changed topic what
 * changed (topic, schema, records), then traces, notes and the export's warnings. Lists are cut at
 * `maxItems` entries; the JSON report has the details.
 */
export function renderReportText(report: ChangeReport, options: RenderOptions = {}): string {
  const max = options.maxItems ?? 20;
  const valueLength = options.maxValueLength ?? 80;
  const lines: string[] = [headline(report)];
  const show = (value: unknown) =>
    shorten(value === undefined ? '(none)' : JSON.stringify(value), valueLength);

  for (const topic of report.topics) {
    if (!topic.changed) continue;
    lines.push('', topicTitle(topic));
    if (topic.reapproved)
      lines.push(`  re-approved: revision ${topic.previousRevisionId} -> ${topic.revisionId}`);
    if (topic.renamed) lines.push(`  renamed: "${topic.renamed.before}" -> "${topic.renamed.after}"`);
    if (topic.versionChange)
      lines.push(`  version: ${topic.versionChange.before} -> ${topic.versionChange.after}`);
    if (topic.status === 'present' && topic.schema.changed) lines.push(...schemaLines(topic.schema));
    const c = topic.counts;
    lines.push(
      `  records: ${c.before} -> ${c.after}` +
        (report.initial ? '' : `: ${c.added} added, ${c.removed} removed, ${c.changed} changed`),
    );
    // The initial snapshot adds everything; listing it helps no one.
    if (report.initial) continue;
    list(lines, topic.added, topic.omitted.added, max, (r) => `    + ${r.id} ${r.name}`);
    list(lines, topic.removed, topic.omitted.removed, max, (r) => `    - ${r.id} ${r.name}`);
    list(lines, topic.changedRecords, topic.omitted.changed, max, (r) => `    ~ ${recordLine(r, show)}`);
  }

  const t = report.summary.traces;
  if (report.traces.compared && !report.initial && t.added + t.removed + t.changed > 0) {
    lines.push(
      '',
      `Traces: ${t.before} -> ${t.after}: ${t.added} added, ${t.removed} removed, ${t.changed} changed`,
    );
    list(lines, report.traces.added, report.traces.omitted.added, max, (x) => `  + ${traceText(x)}`);
    list(lines, report.traces.removed, report.traces.omitted.removed, max, (x) => `  - ${traceText(x)}`);
    list(
      lines,
      report.traces.changed,
      report.traces.omitted.changed,
      max,
      (x) => `  ~ ${traceText(x.before)} => ${traceText(x.after)}`,
    );
  }
  if (report.notes.length > 0) lines.push('', ...report.notes.map((note) => `Note: ${note}`));
  if (report.warnings.length > 0) lines.push('', ...report.warnings.map((warning) => `Warning: ${warning}`));
  return `${lines.join('\n')}\n`;
}

function headline(report: ChangeReport): string {
  const { topics, records, traces } = report.summary;
  const tracesText = report.traces.compared ? `, ${traces.after} traces` : '';
  if (report.initial)
    return `Initial snapshot of ${report.exportedAt}: ${topics.after} topics, ${records.after} records${tracesText}.`;
  if (!report.changed)
    return `No changes since ${report.previousExportedAt} (${topics.after} topics, ${records.after} records${tracesText}).`;
  const parts = [`records ${records.added} added, ${records.removed} removed, ${records.changed} changed`];
  if (report.traces.compared)
    parts.push(`traces ${traces.added} added, ${traces.removed} removed, ${traces.changed} changed`);
  if (topics.added + topics.removed > 0)
    parts.push(`topics ${topics.added} added, ${topics.removed} removed`);
  if (report.summary.schemaChanges > 0) parts.push(`${report.summary.schemaChanges} schema changes`);
  if (report.summary.reapprovals > 0) parts.push(`${report.summary.reapprovals} re-approvals`);
  return `Changes from ${report.previousExportedAt} to ${report.exportedAt}: ${parts.join('; ')}.`;
}

function topicTitle(topic: TopicChanges): string {
  const status =
    topic.status === 'present' ? '' : ` (${topic.status === 'added' ? 'new topic' : 'no longer exported'})`;
  return `${topic.name}${status} [history ${topic.historyId}, revision ${topic.revisionId ?? topic.previousRevisionId}]`;
}

function schemaLines(schema: SchemaChanges): string[] {
  const lines: string[] = [];
  for (const f of schema.fieldsAdded)
    lines.push(`  field added: "${f.name}" (key ${f.key}${f.type ? `, ${f.type}` : ''})`);
  for (const f of schema.fieldsRemoved) lines.push(`  field removed: "${f.name}" (key ${f.key})`);
  for (const f of schema.fieldsRenamed)
    lines.push(`  field renamed: "${f.before}" -> "${f.after}" (key ${f.key})`);
  for (const f of schema.fieldsModified) {
    const what = [
      f.type && `type ${f.type.before ?? '(none)'} -> ${f.type.after ?? '(none)'}`,
      f.label && `label "${f.label.before ?? ''}" -> "${f.label.after ?? ''}"`,
      f.options && 'options changed',
    ].filter(Boolean);
    lines.push(`  field changed: "${f.name}": ${what.join(', ')}`);
  }
  if (lines.length === 0) lines.push('  schema changed (layout or rules; no field differs)');
  return lines;
}

function recordLine(change: RecordChange, show: (value: unknown) => string): string {
  const parts: string[] = [];
  if (change.nameChange)
    parts.push(`name ${show(change.nameChange.before)} -> ${show(change.nameChange.after)}`);
  for (const field of change.fields) parts.push(fieldText(field, show));
  if (change.versionChange && parts.length === 0)
    parts.push(`version ${change.versionChange.before} -> ${change.versionChange.after}`);
  return `${change.id} ${change.name}: ${parts.join('; ')}`;
}

function fieldText(field: FieldChange, show: (value: unknown) => string): string {
  switch (field.change) {
    case 'added':
      return `${field.field}: + ${show(field.after)}`;
    case 'removed':
      return `${field.field}: - ${show(field.before)}`;
    case 'modified':
      return `${field.field}: ${show(field.before)} -> ${show(field.after)}`;
  }
}

function traceText(trace: ExportedTrace): string {
  const suspect = trace.suspect ? ', suspect' : '';
  return `${trace.id}: ${trace.source.type} ${trace.source.id} -> ${trace.target.type} ${trace.target.id} (${trace.relationTypes.join(', ')}${suspect})`;
}

function list<T>(
  lines: string[],
  items: T[],
  omitted: number,
  max: number,
  render: (item: T) => string,
): void {
  for (const item of items.slice(0, max)) lines.push(render(item));
  const more = items.length - Math.min(items.length, max) + omitted;
  if (more > 0) lines.push(`    ... and ${more} more`);
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 3))}...`;
}
