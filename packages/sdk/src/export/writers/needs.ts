import type { Writable } from 'node:stream';
import type { ExportedField, ExportedRecord, ExportedTopic } from '../model.js';
import { cellText } from './cells.js';
import { valueOf } from './columns.js';
import { writeChunk } from './output.js';
import { SpooledWriter } from './spooled-writer.js';
import { linksBySource, RECORD_NODE_TYPE } from './traces.js';

export interface NeedsWriterOptions {
  /** Where records wait until their links are known (default: the system temp folder). */
  tempDir?: string;
  /** `project` of needs.json (default: the names of the exported topics). */
  project?: string;
  /** The version the needs are filed under (default: the topics' version when they share one). */
  version?: string;
  /** Need type (default "req", a type every Sphinx-Needs project has). */
  needType?: string;
  /** Prefix of need ids (default "REQ"): ids are "<prefix>_<RECORD ID>". */
  idPrefix?: string;
  /** Semantic name whose value becomes the need's title (default: the record name). */
  titleField?: string;
  /** Semantic name whose value becomes the need's description (default: a field named "description"). */
  descriptionField?: string;
  /** Semantic name whose value becomes the need's status (default: a field named "status"). */
  statusField?: string;
}

/** Need options every exported need carries, naming the record it came from. */
export const RECORD_OPTIONS = [
  'rxs_record_id',
  'rxs_record_version',
  'rxs_topic',
  'rxs_topic_revision_id',
] as const;

/** Fields of a need that Sphinx-Needs itself defines; field options must not take these names. */
const CORE_NEED_FIELDS = new Set([
  ...(
    'id title description content type type_name type_prefix type_color type_style status tags links links_back ' +
    'docname lineno lineno_content collapse hide layout style template pre_template post_template constraints ' +
    'constraints_passed constraints_results arch is_import is_external external_url external_css is_modified ' +
    'modifications is_need is_part parts id_parent id_complete title_from_content signature sections section_name ' +
    'content_id doctype jinja_content parent_need parent_needs parent_needs_back max_amount max_content_lines query ' +
    'service specific delete full_title url url_postfix has_dead_links has_forbidden_dead_links back'
  ).split(' '),
  ...RECORD_OPTIONS,
]);

/**
 * A need id for a record that Sphinx-Needs' default `needs_id_regex` (^[A-Z0-9_]{5,}) accepts:
 * "REQ_6A7701FFCD5640B4BF28B05E" for the service's lowercase hex ids; any other id is
 * hex-encoded after an "X", so two records never share a need id.
 */
export function needId(recordId: string, prefix = 'REQ'): string {
  const safePrefix = prefix.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  const body = /^[0-9a-f]+$/.test(recordId)
    ? recordId.toUpperCase()
    : `X${Buffer.from(recordId, 'utf8').toString('hex').toUpperCase()}`;
  return `${safePrefix}_${body}`;
}

/** A Sphinx option name for a semantic name: lowercase letters, digits and underscores. */
export function optionName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return slug === '' || /^[0-9]/.test(slug) ? `field_${slug}` : slug;
}

/** Description text is reStructuredText to Sphinx: escape what would turn plain text into markup. */
function rstPlainText(text: string): string {
  return text.replace(/[\\*`|]/g, '\\$&').replace(/(\w)_(?=\W|$)/g, '$1\\_');
}

/**
 * A needs.json (the Sphinx-Needs exchange format) that `needimport` reads: one need per record
 * with id "REQ_<RECORD ID>", the record name as title, a description and status taken from fields
 * of those names (all three configurable), the topic as tag, links from traces (source -> target) between
 * exported records, and every semantic field as an extra option with a safe name ("Requirement
 * concerning" -> requirement_concerning); values are strings, as needimport expects.
 *
 * Links are known only after all records, and a need's links sit inside it, so records wait in a
 * temporary file and the needs are written on close, in flat memory.
 */
export class NeedsWriter extends SpooledWriter {
  readonly extension = 'json';

  constructor(
    out: Writable,
    private readonly options: NeedsWriterOptions = {},
  ) {
    super(out, options.tempDir);
  }

  /** The option name each semantic name is written under, the same across topics. */
  private optionNames(): Map<string, string> {
    const options = new Map<string, string>();
    const taken = new Set(CORE_NEED_FIELDS);
    for (const { fields } of this.tracker.topics) {
      for (const { name } of fields) {
        if (options.has(name)) continue;
        let option = optionName(name);
        if (taken.has(option)) option = `${option}_field`;
        for (let n = 2; taken.has(option); n++) option = `${optionName(name)}_field_${n}`;
        taken.add(option);
        options.set(name, option);
      }
    }
    return options;
  }

  protected async produce(): Promise<void> {
    const { header, topics } = this.tracker;
    const created = header?.exportedAt ?? new Date().toISOString();
    const versions = [...new Set(topics.map(({ topic }) => topic.version))];
    const version = this.options.version ?? (versions.length === 1 ? versions[0]! : created);
    const project =
      this.options.project ?? (topics.map(({ topic }) => topic.name).join(', ') || 'RXS export');
    const links = await this.linksBetweenNeeds();
    const optionNames = this.optionNames();
    const shapes = topics.map(({ topic, fields }) => ({
      topic,
      fields,
      optionNames,
      title: pickField(fields, this.options.titleField),
      description: pickField(fields, this.options.descriptionField, 'description'),
      status: pickField(fields, this.options.statusField, 'status'),
    }));

    const head = { created, current_version: version, project };
    const versionHead = JSON.stringify({
      created,
      needs_amount: topics.reduce((sum, { recordCount }) => sum + recordCount, 0),
    }).slice(0, -1);
    await writeChunk(
      this.out,
      `${JSON.stringify(head).slice(0, -1)},"versions":{${JSON.stringify(version)}:${versionHead},"needs":{`,
    );
    let first = true;
    for await (const { topic, record } of this.spool.replay()) {
      const need = this.need(record, shapes[topic]!, links.get(record.id) ?? []);
      await writeChunk(this.out, `${first ? '' : ','}\n${JSON.stringify(need.id)}:${JSON.stringify(need)}`);
      first = false;
    }
    await writeChunk(this.out, '\n}}}}\n');
  }

  private need(
    record: ExportedRecord,
    shape: NeedShape,
    links: string[],
  ): Record<string, unknown> & { id: string } {
    const {
      topic,
      fields,
      optionNames,
      title: titleField,
      description: descriptionField,
      status: statusField,
    } = shape;
    const prefix = this.options.idPrefix;
    const text = (field: ExportedField | undefined) => (field ? cellText(valueOf(record, field.name)) : '');
    const need: Record<string, unknown> & { id: string } = {
      id: needId(record.id, prefix),
      title: text(titleField) || record.name,
      description: rstPlainText(text(descriptionField)),
      type: this.options.needType ?? 'req',
      status: text(statusField) || null,
      tags: [optionName(topic.name)],
      links: links.map((target) => needId(target, prefix)),
      rxs_record_id: record.id,
      rxs_record_version: record.version,
      rxs_topic: topic.name,
      rxs_topic_revision_id: record.topicRevisionId,
    };
    for (const field of fields) {
      const value = valueOf(record, field.name);
      if (field === descriptionField || value === undefined) continue;
      need[optionNames.get(field.name) ?? optionName(field.name)] = cellText(value);
    }
    return need;
  }

  /** Outgoing links of each record to other exported records. */
  private async linksBetweenNeeds(): Promise<Map<string, string[]>> {
    const exported = await this.exportedTraceEnds();
    const result = new Map<string, string[]>();
    for (const [source, links] of linksBySource(this.tracker.traces)) {
      const targets = links
        .filter(
          ({ trace }) => trace.source.type === RECORD_NODE_TYPE && trace.target.type === RECORD_NODE_TYPE,
        )
        .map(({ trace }) => trace.target.id)
        .filter((target) => exported.has(target));
      if (exported.has(source) && targets.length > 0) result.set(source, [...new Set(targets)]);
    }
    return result;
  }
}

/** How the records of one topic become needs. */
interface NeedShape {
  topic: ExportedTopic;
  fields: ExportedField[];
  optionNames: Map<string, string>;
  title: ExportedField | undefined;
  description: ExportedField | undefined;
  status: ExportedField | undefined;
}

/** The field named explicitly, else the first whose name is `fallback` in any case. */
function pickField(
  fields: ExportedField[],
  name: string | undefined,
  fallback?: string,
): ExportedField | undefined {
  if (name !== undefined) return fields.find((field) => field.name === name);
  return fallback === undefined ? undefined : fields.find((field) => field.name.toLowerCase() === fallback);
}
