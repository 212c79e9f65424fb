import type { ExportedField, ExportedTopic, ExportedTrace, ExportHeader, ExportPart } from '../model.js';
import { TraceRoles } from './traces.js';

/** A finished topic: its final columns and how many records it had. */
export interface TopicSummary {
  topic: ExportedTopic;
  recordCount: number;
  /**
   * The topic's fields as of its `topic-end` part, plus any value name a record carried that no
   * field declared, so a writer that builds columns from these never drops a value.
   */
  fields: ExportedField[];
}

/**
 * Follows the parts of an export and keeps what writers need besides the record stream itself:
 * the header, one summary per topic, the traces and the warnings. Memory depends on the number of
 * topics, fields and traces, never on the number of records.
 */
export class ExportTracker {
  header: ExportHeader | undefined;
  readonly topics: TopicSummary[] = [];
  readonly traces: ExportedTrace[] = [];
  /** The trace model's roles the traces name (none when links are named by relation type). */
  readonly roles = new TraceRoles();
  warnings: string[] = [];
  /** The `end` part arrived: the export is complete (else a close means it failed). */
  ended = false;
  private open: { topic: ExportedTopic; names: Set<string>; extra: ExportedField[] } | undefined;

  observe(part: ExportPart): void {
    switch (part.kind) {
      case 'header':
        this.header = part.header;
        break;
      case 'topic':
        this.open = { topic: part.topic, names: new Set(part.topic.fields.map((f) => f.name)), extra: [] };
        break;
      case 'record': {
        const open = this.requireOpen('record');
        for (const name of Object.keys(part.record.values)) {
          if (open.names.has(name)) continue;
          open.names.add(name);
          open.extra.push({ key: name, name, source: 'data' });
        }
        break;
      }
      case 'topic-end': {
        const { extra } = this.requireOpen('topic-end');
        const declared = new Set(part.topic.fields.map((f) => f.name));
        const fields = [...part.topic.fields, ...extra.filter((f) => !declared.has(f.name))];
        this.topics.push({ topic: part.topic, recordCount: part.recordCount, fields });
        this.open = undefined;
        break;
      }
      case 'traces':
        this.traces.push(...part.traces);
        this.roles.add(part.roles ?? []);
        break;
      case 'end':
        this.warnings = part.warnings;
        this.ended = true;
        break;
    }
  }

  /** The topic whose records are arriving, and the position it will have in `topics`. */
  get current(): { topic: ExportedTopic; index: number } {
    return { topic: this.requireOpen('record').topic, index: this.topics.length };
  }

  get withTraces(): boolean {
    return this.header?.withTraces === true || this.traces.length > 0;
  }

  private requireOpen(kind: string) {
    if (!this.open) throw new Error(`Export part "${kind}" arrived outside a topic.`);
    return this.open;
  }
}
