import type { Writable } from 'node:stream';
import type { ExportPart, ExportWriter, LinkType } from '../model.js';
import { endOutput, writeChunk } from './output.js';
import { ExportTracker } from './tracker.js';

export const JSON_FORMAT_NAME = 'rxs-export';
export const JSON_FORMAT_VERSION = 1;

/**
 * The whole snapshot as one JSON document, streamed: one record per line as it arrives.
 *
 *   { "format": "rxs-export", "formatVersion": 1, "exportedAt", "servers", "revisionIds",
 *     "topics": [ { ...topic, "approval"?, "records": [ ... ], "recordCount", "fields" } ],
 *     "traces": [ ... ] | null, "linkTypes": [ ... ], "roles"?: [ ... ], "warnings": [ ... ] }
 *
 * A trace a role of the tenant's trace model names carries `role` (its forward name) and `roleId`;
 * `roles` lists those roles as the model has them, present only when a trace names one.
 *
 * A topic's `fields` come after its records because keys met only in record data are known only
 * then; JSON readers do not care about key order.
 */
export class JsonWriter implements ExportWriter {
  readonly extension = 'json';
  private readonly tracker = new ExportTracker();
  private topicCount = 0;
  private recordCount = 0;
  private traceCount = 0;
  private tracesOpen = false;
  private linkTypes: LinkType[] = [];

  constructor(private readonly out: Writable) {}

  async write(part: ExportPart): Promise<void> {
    this.tracker.observe(part);
    switch (part.kind) {
      case 'header': {
        // `asOf` stays out: an export as of a moment must equal, byte for byte, the one taken then.
        const { exportedAt, servers, revisionIds } = part.header;
        const head = {
          format: JSON_FORMAT_NAME,
          formatVersion: JSON_FORMAT_VERSION,
          exportedAt,
          servers,
          revisionIds,
        };
        return this.emit(`${JSON.stringify(head).slice(0, -1)},"topics":[`);
      }
      case 'topic': {
        // Fields are written at topic-end, complete.
        const { fields: _atStart, ...topic } = part.topic;
        this.recordCount = 0;
        const separator = this.topicCount++ === 0 ? '\n' : ',\n';
        return this.emit(`${separator}${JSON.stringify(topic).slice(0, -1)},"records":[`);
      }
      case 'record':
        return this.emit(`${this.recordCount++ === 0 ? '\n' : ',\n'}${JSON.stringify(part.record)}`);
      case 'topic-end': {
        const { fields } = this.tracker.topics.at(-1)!;
        const rest = JSON.stringify({ recordCount: part.recordCount, fields }).slice(1);
        return this.emit(`${this.recordCount > 0 ? '\n' : ''}],${rest}`);
      }
      case 'traces': {
        let text = '';
        this.linkTypes.push(...part.linkTypes);
        if (!this.tracesOpen) {
          this.tracesOpen = true;
          text = `${this.closeTopics()},"traces":[`;
        }
        for (const trace of part.traces)
          text += `${this.traceCount++ === 0 ? '' : ','}\n${JSON.stringify(trace)}`;
        return this.emit(text);
      }
      case 'end': {
        const traces = this.tracesOpen
          ? `${this.traceCount > 0 ? '\n' : ''}]`
          : `${this.closeTopics()},"traces":${this.tracker.withTraces ? '[]' : 'null'}`;
        const linkTypes = JSON.stringify(this.linkTypes);
        const roles = this.tracker.roles.all;
        const named = roles.length > 0 ? `,"roles":${JSON.stringify(roles)}` : '';
        return this.emit(
          `${traces},"linkTypes":${linkTypes}${named},"warnings":${JSON.stringify(part.warnings)}}\n`,
        );
      }
    }
  }

  async close(): Promise<void> {
    await endOutput(this.out);
  }

  private closeTopics(): string {
    return this.topicCount > 0 ? '\n]' : ']';
  }

  private emit(text: string): Promise<void> {
    return writeChunk(this.out, text);
  }
}
