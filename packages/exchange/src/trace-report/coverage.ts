import { roleOfTrace, type TraceRole } from '@rxs/contract';
import type { ExportedTrace, ExportPart, LinkType } from '../export/model.js';
import { CoverageGraph } from './coverage-graph.js';
import type { CoverageReport, CoverageRule, CoverageTopic, RuleCoverage } from './coverage-types.js';

/**
 * Traceability coverage: is every record of a source topic linked to the target topic (every
 * requirement verified), and which target records link to nothing (tests without a requirement)?
 * Computed from an export's parts (records with their readable ids, traces, the mapping file's link
 * types, or the tenant's trace model), so `--mapping`, `--as-of` and `--baseline` mean what they mean
 * for `rxs export`.
 */

/** A trace between two records, by record id (`coverageOf`'s input). */
interface Link {
  source: string;
  target: string;
  linkType?: string;
  suspect?: boolean;
}

/** Which links a report counts, besides the export's own mapping file. */
export interface CoverageOptions {
  /**
   * The tenant's trace model: each role between two exported topics is a rule, from its `to` topic
   * (what is verified, implemented, ...) to its `from` topic, named by its backward name ("verified
   * by"); a trace counts for the role it names (its topics and relation type). Used instead of the
   * mapping file's links.
   */
  model?: readonly TraceRole[];
  /**
   * Also a rule for each two consecutive topics that no named link joins: any trace between them,
   * either way. Default true: the topics were given in the order of the V (`--kt`). False when the
   * topics are the model's own chain, whose neighbours need not be linked at all.
   */
  consecutive?: boolean;
}

/** A role as the link type of its rule: from the role's `to` topic to its `from` topic. */
function linkTypeOfRole(role: TraceRole): LinkType {
  return {
    name: role.backward_name,
    incoming: role.forward_name,
    sourceTopicHistoryId: role.to.topic_history_id,
    targetTopicHistoryId: role.from.topic_history_id,
  };
}

/**
 * Gathers what coverage needs from an export's parts as they pass, in numbers (CoverageGraph):
 * each record's readable id, each trace's two record numbers; never a record or a trace.
 */
export class CoverageCollector {
  private readonly graph = new CoverageGraph();
  private linkTypes: LinkType[] = [];

  constructor(private readonly options: CoverageOptions = {}) {}

  async write(part: ExportPart): Promise<void> {
    this.take(part);
  }

  async writeParts(parts: readonly ExportPart[]): Promise<void> {
    for (const part of parts) this.take(part);
  }

  private take(part: ExportPart): void {
    if (part.kind === 'topic') {
      const { revisionId, historyId, name } = part.topic;
      this.graph.addTopic({ revisionId, historyId, name });
    } else if (part.kind === 'record') {
      const { topicRevisionId, id, readableId } = part.record;
      this.graph.addRecord(topicRevisionId, id, readableId);
    } else if (part.kind === 'traces') {
      const { model } = this.options;
      // The links named are the rules even when no trace follows one (then it is 0% covered).
      this.linkTypes = model ? model.map(linkTypeOfRole) : (part.mappedLinkTypes ?? part.linkTypes);
      for (const trace of part.traces) {
        if (trace.source.type !== 'Record' || trace.target.type !== 'Record') continue;
        if (model) this.addRoleLink(model, trace);
        else this.graph.addLink(trace.source.id, trace.target.id, trace.linkType, trace.suspect);
      }
    }
  }

  /** A trace as the model names it: from its record of the role's `to` topic, named by the role. */
  private addRoleLink(model: readonly TraceRole[], trace: ExportedTrace): void {
    const sourceTopic = this.graph.topicOf(trace.source.id)?.historyId ?? '';
    const targetTopic = this.graph.topicOf(trace.target.id)?.historyId ?? '';
    for (const relationType of trace.relationTypes) {
      const role = roleOfTrace(model, sourceTopic, targetTopic, relationType);
      if (!role) continue;
      const [to, from] =
        role.trace_source === 'to' ? [trace.source, trace.target] : [trace.target, trace.source];
      this.graph.addLink(to.id, from.id, role.backward_name, trace.suspect);
      return;
    }
    this.graph.addLink(trace.source.id, trace.target.id, undefined, trace.suspect);
  }

  /** The coverage of each rule: the named link types, then consecutive topics without one. */
  report(): CoverageReport {
    return this.graph.report(rulesOf(this.graph.topics, this.linkTypes, this.options.consecutive ?? true));
  }
}

/** Rules, then each rule's coverage, orphans and links (records by topic revision: record id -> readable id). */
export function coverageOf(
  topics: readonly CoverageTopic[],
  records: ReadonlyMap<string, ReadonlyMap<string, string>>,
  links: readonly Link[],
  linkTypes: readonly LinkType[],
): CoverageReport {
  const graph = new CoverageGraph();
  for (const topic of topics) graph.addTopic(topic);
  for (const [revisionId, readable] of records)
    for (const [id, readableId] of readable) graph.addRecord(revisionId, id, readableId);
  for (const link of links) graph.addLink(link.source, link.target, link.linkType, link.suspect === true);
  return graph.report(rulesOf(topics, linkTypes));
}

/** The named link types between two of the topics, then (if `consecutive`) consecutive topics without one. */
function rulesOf(
  topics: readonly CoverageTopic[],
  linkTypes: readonly LinkType[],
  consecutive = true,
): CoverageRule[] {
  const byHistory = new Map(topics.map((t) => [t.historyId, t]));
  const rules: CoverageRule[] = [];
  const named = new Set<string>();
  for (const type of linkTypes) {
    const source = byHistory.get(type.sourceTopicHistoryId);
    const target = byHistory.get(type.targetTopicHistoryId);
    if (!source || !target) continue;
    rules.push({ source, target, linkType: type.name });
    named
      .add(`${source.historyId}\u0000${target.historyId}`)
      .add(`${target.historyId}\u0000${source.historyId}`);
  }
  // Without a named link, consecutive topics as given (a V-model's chain): any trace either way.
  for (let i = 0; consecutive && i + 1 < topics.length; i++) {
    const [source, target] = [topics[i]!, topics[i + 1]!];
    if (!named.has(`${source.historyId}\u0000${target.historyId}`)) rules.push({ source, target });
  }
  return rules;
}

/** A rule as the reports name it: `Source → Target (link type)`. */
export function ruleName(rule: CoverageRule): string {
  return `${rule.source.name} → ${rule.target.name}${rule.linkType ? ` (${rule.linkType})` : ''}`;
}

/** Cells of one matrix at most; beyond, reports list the links (a 10k x 20k grid helps nobody). */
export const MAX_MATRIX_CELLS = 40_000;

/** What a matrix cell shows: a link, a suspect link, or nothing. */
export const MATRIX_LINKED = '✓';
export const MATRIX_SUSPECT = '⚠';

/**
 * A rule's matrix: source records (linked ones and those not linked) against target records (all),
 * both sorted, and each pair's cell (MATRIX_LINKED, MATRIX_SUSPECT or ''); undefined when empty or
 * over MAX_MATRIX_CELLS.
 */
export function coverageMatrix(
  r: RuleCoverage,
): { rows: string[]; columns: string[]; cell: (row: string, column: string) => string } | undefined {
  const rows = [...new Set([...r.links.map(([s]) => s), ...r.uncovered])].sort();
  const columns = [...new Set([...r.links.map(([, t]) => t), ...r.orphans])].sort();
  if (rows.length === 0 || columns.length === 0 || rows.length * columns.length > MAX_MATRIX_CELLS)
    return undefined;
  const key = ([s, t]: [string, string]) => `${s}\u0000${t}`;
  const pairs = new Set(r.links.map(key));
  const suspect = new Set(r.suspect.map(key));
  return {
    rows,
    columns,
    cell: (row, column) =>
      suspect.has(key([row, column])) ? MATRIX_SUSPECT : pairs.has(key([row, column])) ? MATRIX_LINKED : '',
  };
}

/**
 * Characters that are Markdown syntax inside a line (CommonMark and GFM): escapes and code spans,
 * emphasis and strikethrough, links and images, raw HTML and autolinks, entity references, table
 * cells, a heading's closing `#`s, math, mentions and e-mail autolinks.
 */
const MARKDOWN_SYNTAX = /[\\`*_~[\]<>&|#$@]|:(?=\/\/)|(?<=www)\./gi;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * A text of the data (a name, an id, a link type) as Markdown that reads as exactly that text, on
 * one line, anywhere inside a line, table cells included: its syntax characters backslash-escaped
 * and its line breaks made spaces. An `_` between two letters or digits (`REQ_001`) can neither open
 * nor close emphasis, so it stays as it is for people reading the file raw.
 */
export function markdownText(text: string): string {
  return text
    .replace(/\r\n|\r|\n/g, ' ')
    .replace(MARKDOWN_SYNTAX, (c: string, at: number, whole: string) =>
      c === '_' && WORD_CHARACTER.test(whole[at - 1] ?? '') && WORD_CHARACTER.test(whole[at + 1] ?? '')
        ? c
        : `\\${c}`,
    );
}

/**
 * The report as Markdown: coverage per rule, then the uncovered records, orphans and links. Every
 * text of the data goes through markdownText, so no name or id can add HTML, links or table cells.
 */
export function coverageMarkdown(report: CoverageReport, failUnder?: number): string {
  const lines = ['# Traceability report', ''];
  if (report.rules.length === 0) {
    lines.push('No rule: give at least two topics (--kt), or a mapping file with links between them.', '');
    return lines.join('\n');
  }
  lines.push(
    '| rule | covered | of | coverage | uncovered | orphans | suspect links |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const r of report.rules) {
    const gate = failUnder !== undefined && r.percent < failUnder ? ' ❌' : '';
    lines.push(
      `| ${markdownText(ruleName(r.rule))} | ${r.covered} | ${r.total} | ${r.percent.toFixed(1)}%${gate} | ${r.uncovered.length} | ${r.orphans.length} | ${r.suspect.length} |`,
    );
  }
  for (const r of report.rules) {
    lines.push('', `## ${markdownText(ruleName(r.rule))}`, '');
    lines.push(
      r.uncovered.length === 0
        ? `Every record of ${markdownText(r.rule.source.name)} is linked.`
        : `Not linked (${r.uncovered.length}): ${r.uncovered.map(markdownText).join(', ')}`,
    );
    lines.push(
      '',
      r.orphans.length === 0
        ? `Every record of ${markdownText(r.rule.target.name)} is linked from ${markdownText(r.rule.source.name)}.`
        : `Orphans of ${markdownText(r.rule.target.name)} (${r.orphans.length}): ${r.orphans.map(markdownText).join(', ')}`,
    );
    if (r.suspect.length > 0)
      lines.push(
        '',
        `Suspect links (${r.suspect.length}), a record changed since the link was reviewed: ${r.suspect.map(([s, t]) => `${markdownText(s)} → ${markdownText(t)}`).join(', ')}`,
      );
    if (r.links.length > 0) {
      const suspect = new Set(r.suspect.map(([s, t]) => `${s}\u0000${t}`));
      lines.push(
        '',
        `| ${markdownText(r.rule.source.name)} | ${markdownText(r.rule.target.name)} | suspect |`,
        '| --- | --- | --- |',
      );
      for (const [source, target] of r.links)
        lines.push(
          `| ${markdownText(source)} | ${markdownText(target)} | ${suspect.has(`${source}\u0000${target}`) ? 'yes' : ''} |`,
        );
    }
  }
  lines.push('');
  return lines.join('\n');
}
