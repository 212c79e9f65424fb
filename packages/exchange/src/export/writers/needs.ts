import type { Writable } from 'node:stream';
import { ExportDataError } from '../errors.js';
import { LEADING_ID_PATTERN } from '../identity.js';
import type {
  ExportedField,
  ExportedRecord,
  ExportedTopic,
  ExportPart,
  LinkType,
  TraceEnd,
} from '../model.js';
import { cellText } from './cells.js';
import { valueOf } from './columns.js';
import { writeChunk } from './output.js';
import { SpooledWriter } from './spooled-writer.js';
import { RECORD_NODE_TYPE } from './traces.js';

export interface NeedsWriterOptions {
  /** Where records wait until their links are known (default: the system temp folder). */
  tempDir?: string;
  /** `project` of needs.json (default: the names of the exported topics). */
  project?: string;
  /**
   * The version the needs are filed under (default: the topics' version when they share a
   * non-empty one, else the export time).
   */
  version?: string;
  /** Need type of every need (default: each topic's `presentation.needType`). */
  needType?: string;
  /** Prefix of the ids made up for records without a readable id (default: each topic's `presentation.idPrefix`). */
  idPrefix?: string;
  /** Semantic name whose value becomes the need's title (default: the topic's title field, else the record name). */
  titleField?: string;
  /** Semantic name whose value becomes the need's description (default: the topic's description field). */
  descriptionField?: string;
  /** Semantic name whose value becomes the need's status (default: the topic's status field). */
  statusField?: string;
  /**
   * The Sphinx document every need is shown in, as `docname` (default: each topic's
   * `presentation.docname`; without one, needs have no `docname`). See `sphinxDocnameMistake`.
   */
  docname?: string;
}

/** Need options every exported need carries, naming the record it came from. */
export const RECORD_OPTIONS = [
  'rxs_record_id',
  'rxs_record_version',
  'rxs_topic',
  'rxs_topic_revision_id',
  'rxs_source_id',
] as const;

/**
 * The option that names a need's suspect links: the need ids its outgoing links lead to whose
 * trace is suspect (a record at either end changed since it was made or reviewed), joined with
 * ", "; "" when none. Sphinx-Needs links carry no attributes, so the mark sits on the need.
 */
export const SUSPECT_LINKS_OPTION = 'rxs_suspect_links';

/** The link option of traces whose pair of topics has no named link type (Sphinx-Needs' own). */
const DEFAULT_LINK_OPTION = 'links';

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
  SUSPECT_LINKS_OPTION,
]);

/** Sphinx-Needs' default `needs_id_regex`; every need id this writer makes matches it. */
export const NEED_ID_PATTERN = /^[A-Z0-9_]{5,}$/;

/**
 * A need id for a readable id that Sphinx-Needs' default `needs_id_regex` (^[A-Z0-9_]{5,})
 * accepts: upper case, accents dropped, every other character outside A-Z 0-9 _ as `_`, and `_`
 * appended up to five characters (`REQ_001` stays, `SYS-REQ-12` becomes `SYS_REQ_12`, `R_1`
 * becomes `R_1__`). Two readable ids may meet in one need id: the writer refuses that export.
 */
export function needId(readableId: string): string {
  return readableId
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_')
    .padEnd(5, '_');
}

/**
 * A Sphinx docname that makes a working link: one or more path segments joined by `/`, each of
 * letters, digits and `_ . ~ -` (URL characters that need no escaping) and starting with a letter,
 * digit or `_` (so never `.`, `..` or a hidden file).
 */
const SPHINX_DOCNAME = /^[A-Za-z0-9_][A-Za-z0-9_.~-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.~-]*)*$/;
/** Suffixes of a source or output file: a docname has none, Sphinx-Needs appends `.html` itself. */
const FILE_SUFFIX = /\.(?:rst|md|txt|html?)$/i;

/**
 * Why a text cannot be the `docname` of exported needs, or undefined when it can. Sphinx-Needs
 * links to an external need at `<base_url>/<docname>.html#<id>`, joining the texts as they are
 * (every version from 1.x to 8.x), so the docname is the document's path below the HTML root,
 * without suffix, made only of characters a URL carries unescaped.
 */
export function sphinxDocnameMistake(docname: string): string | undefined {
  if (FILE_SUFFIX.test(docname))
    return `"${docname}" ends in a file suffix; give the document's name without it (e.g. "${docname.replace(FILE_SUFFIX, '')}"): Sphinx-Needs appends ".html" itself.`;
  if (!SPHINX_DOCNAME.test(docname))
    return `"${docname}" is not a Sphinx document name that a link can carry: use path segments joined by "/" (e.g. "requirements/system"), each a letter, digit or "_", then letters, digits, "_", ".", "~" or "-"; no leading or trailing "/".`;
  return undefined;
}

/** Two records of one export whose readable ids give one need id: never two needs with one id. */
export class NeedIdCollisionError extends ExportDataError {
  override name = 'NeedIdCollisionError';
  override readonly code = 'RXS_ERR_NEED_ID_COLLISION';

  constructor(
    readonly needId: string,
    readonly first: { recordId: string; readableId: string },
    readonly second: { recordId: string; readableId: string },
  ) {
    super(
      `Records ${first.recordId} ("${first.readableId}") and ${second.recordId} ("${second.readableId}") both become ` +
        `the need id "${needId}": Sphinx-Needs ids hold only A-Z, 0-9 and "_", so other characters become "_" and ` +
        `letters upper case. Rename one of them, or give the topic another identifier rule in a mapping file.`,
    );
  }
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

// NUL is docutils' own escape marker (it deletes it from every text), and a lone surrogate makes
// Python fail to write the page: both become U+FFFD, in every string of the file.
const UNSAFE_FOR_SPHINX = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A string as Sphinx can carry it: NUL and lone surrogates replaced by U+FFFD. */
export function sphinxSafe(text: string): string {
  return text.replace(UNSAFE_FOR_SPHINX, '\uFFFD');
}

// Where Python's str.splitlines() breaks a line: Sphinx-Needs splits the content there.
const PYTHON_LINE_BREAK = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;
// What Python's str.strip() removes (docutils strips lines with it).
const PYTHON_SPACE = /^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;
const isSpace = (char: string | undefined) => char !== undefined && PYTHON_SPACE.test(char);
// Every ASCII punctuation character and docutils' other bullets (• ‣ ⁃): inline markup, explicit
// markup, lists, tables and section adornments all start with one, so a backslash before each
// leaves docutils only text.
const MARKUP_CHARACTER = /[!-/:-@[-`{-~\u2022\u2023\u2043]/g;

/**
 * A text as reStructuredText that docutils reads back as that same text and nothing else (no
 * directive, role, reference, list, table, section or substitution), however it is written.
 * Prose (lines without leading or trailing whitespace, paragraphs apart by one blank line) is
 * written as paragraphs with every ASCII punctuation character backslash-escaped, so it renders as
 * ordinary text; anything else is a `code` block of language `text`, whose lines docutils never
 * parses. The `:class:` option line fixes the block's indentation, so the text's own leading
 * whitespace survives. What RST cannot hold: line breaks of any kind become LF (Sphinx-Needs splits
 * lines as Python does), blank lines at the start and end are dropped (an all-blank text is empty),
 * and NUL and lone surrogates become U+FFFD.
 */
export function rstLiteralText(text: string): string {
  const lines = sphinxSafe(text).split(PYTHON_LINE_BREAK);
  const blank = (line: string) => [...line].every(isSpace);
  while (lines.length > 0 && blank(lines[0]!)) lines.shift();
  while (lines.length > 0 && blank(lines[lines.length - 1]!)) lines.pop();
  if (lines.length === 0) return '';
  const prose = lines.every(
    (line, i) =>
      (line === '' && lines[i - 1] !== '') ||
      (!isSpace(line[0]) && !isSpace(line[line.length - 1]) && !/^\\+$/.test(line)),
  );
  if (prose) return lines.map((line) => line.replace(MARKUP_CHARACTER, '\\$&')).join('\n');
  return ['.. code:: text', '   :class: rxs-text', '', ...lines.map((line) => `   ${line}`)].join('\n');
}

/** A named link type as it appears in the file: its option name and how it reads both ways. */
interface LinkOption {
  option: string;
  incoming: string;
  /** How the link reads from the need that holds it, for a role's link type (its forward name). */
  outgoing?: string;
}

/** The key of a trace model role's link option among the link options (apart from link type names). */
const roleKey = (roleId: string) => `\u0000role:${roleId}`;

/**
 * A needs.json (the Sphinx-Needs exchange format) that `needimport` and `needs_external_needs`
 * read: one need per record,
 * with the record's readable id as need id, type, title, description and status from the topic's
 * presentation, the topic as tag, links from traces between exported records (under the link type
 * of the trace model's role that names a trace, at the record of the role's `from` end; else under
 * the link type a mapping file names for the pair of topics, else `links`), and every semantic field as an extra
 * option on every need ("" where a record has no value, as Sphinx-Needs writes them itself).
 * A docname (the option, else the topic's mapping) tells `needs_external_needs` where each need is
 * shown. The description is reStructuredText that shows the record's text literally (`rstLiteralText`).
 *
 * Links are known only after all records, and a need's links sit inside it, so records wait in a
 * temporary file and the needs are written on close; memory holds the traces and one need id per
 * record (to refuse two records with one need id, and to resolve links).
 */
export class NeedsWriter extends SpooledWriter {
  readonly extension = 'json';
  /** Which record took each need id, to refuse a second one. */
  private readonly owners = new Map<string, { recordId: string; readableId: string }>();
  /** The need id of each exported record: links go only between them. */
  private readonly needIds = new Map<string, string>();
  private linkTypes: LinkType[] = [];

  constructor(
    out: Writable,
    private readonly options: NeedsWriterOptions = {},
  ) {
    super(out, options.tempDir);
    const mistake = options.docname === undefined ? undefined : sphinxDocnameMistake(options.docname);
    if (mistake) throw new Error(`The docname of the needs: ${mistake}`);
  }

  protected override observe(part: ExportPart): void {
    if (part.kind === 'traces') this.linkTypes.push(...part.linkTypes);
    if (part.kind !== 'record') return;
    const { record } = part;
    const id = this.needIdOf(record.readableId, record.id);
    const first = this.owners.get(id);
    if (first && first.recordId !== record.id)
      throw new NeedIdCollisionError(id, first, { recordId: record.id, readableId: record.readableId });
    this.owners.set(id, { recordId: record.id, readableId: record.readableId });
    this.needIds.set(record.id, id);
  }

  /** The need id of a record: its readable id, with the `idPrefix` option replacing a made-up id's prefix. */
  private needIdOf(readableId: string, recordId: string): string {
    const { idPrefix } = this.options;
    const madeUp = idPrefix !== undefined && readableId.endsWith(`_${recordId}`);
    return needId(madeUp ? `${idPrefix}_${recordId}` : readableId);
  }

  /**
   * The link options: `links`, then one per named link type, in order of first use, then one per
   * trace model role the traces name, after its id (`verifies`, incoming "verified by"), in the
   * model's order; a role whose option name is taken gets `_link` (then a number) appended.
   */
  private linkOptions(): Map<string, LinkOption> {
    const options = new Map<string, LinkOption>([
      [DEFAULT_LINK_OPTION, { option: DEFAULT_LINK_OPTION, incoming: 'links incoming' }],
    ]);
    for (const { name, incoming } of this.linkTypes) {
      if (options.has(name)) continue;
      const option = optionName(name);
      if (option !== DEFAULT_LINK_OPTION && CORE_NEED_FIELDS.has(option))
        throw new Error(
          `The link type "${name}" would take the Sphinx-Needs field "${option}". Name the link type otherwise in the mapping file (for example "${option}_link").`,
        );
      options.set(name, { option, incoming });
    }
    const taken = new Set([...CORE_NEED_FIELDS, ...[...options.values()].map(({ option }) => option)]);
    for (const role of this.tracker.roles.all) {
      const base = optionName(role.id);
      let option = taken.has(base) ? `${base}_link` : base;
      for (let n = 2; taken.has(option); n++) option = `${base}_link_${n}`;
      taken.add(option);
      options.set(roleKey(role.id), { option, incoming: role.backward_name, outgoing: role.forward_name });
    }
    return options;
  }

  /** The option name each semantic name is written under, the same across topics. */
  private optionNames(linkOptions: Iterable<LinkOption>): Map<string, string> {
    const options = new Map<string, string>();
    const taken = new Set(CORE_NEED_FIELDS);
    for (const { option } of linkOptions) taken.add(option);
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
    // needs_external_needs refuses a file whose current_version is empty (every Sphinx-Needs
    // version): needs of topics without a version are filed under the export time.
    const version = this.options.version || (versions.length === 1 ? versions[0]! : '') || created;
    const project =
      this.options.project ?? (topics.map(({ topic }) => topic.name).join(', ') || 'RXS export');
    const linkOptions = this.linkOptions();
    const links = this.linksBetweenNeeds(linkOptions);
    const optionNames = this.optionNames(linkOptions.values());
    const shapes = topics.map(({ topic, fields }) => this.shapeOf(topic, fields));
    // Extra options: every semantic name, on every need, but a name that is only ever a description.
    const descriptions = new Set(shapes.map(({ description }) => description?.name));
    const plain = new Set(
      shapes.flatMap(({ fields, description }) => fields.filter((f) => f !== description).map((f) => f.name)),
    );
    const extraOptions = [...optionNames].filter(([name]) => plain.has(name) || !descriptions.has(name));

    const head = { created, current_version: sphinxSafe(version), project: sphinxSafe(project) };
    const versionHead = JSON.stringify({
      created,
      creator: { program: 'rxs' },
      needs_amount: topics.reduce((sum, { recordCount }) => sum + recordCount, 0),
      needs_schema: needsSchema(
        extraOptions,
        linkOptions.values(),
        shapes.some(({ docname }) => docname !== undefined),
      ),
    }).slice(0, -1);
    await writeChunk(
      this.out,
      `${JSON.stringify(head).slice(0, -1)},"versions":{${JSON.stringify(head.current_version)}:${versionHead},"needs":{`,
    );
    let first = true;
    for await (const { topic, record } of this.spool.replay()) {
      const need = this.need(record, shapes[topic]!, extraOptions, linkOptions, links.get(record.id));
      await writeChunk(this.out, `${first ? '' : ','}\n${JSON.stringify(need.id)}:${JSON.stringify(need)}`);
      first = false;
    }
    await writeChunk(this.out, '\n}}}}\n');
  }

  private shapeOf(topic: ExportedTopic, fields: ExportedField[]): NeedShape {
    const { presentation } = topic;
    const field = (name: string | undefined) =>
      name === undefined ? undefined : fields.find((f) => f.name === name);
    return {
      topic,
      fields,
      needType: this.options.needType ?? presentation.needType,
      title: field(this.options.titleField ?? presentation.titleField),
      description: field(this.options.descriptionField ?? presentation.descriptionField),
      status: field(this.options.statusField ?? presentation.statusField),
      docname: this.options.docname ?? presentation.docname,
    };
  }

  private need(
    record: ExportedRecord,
    shape: NeedShape,
    extraOptions: [string, string][],
    linkOptions: Map<string, LinkOption>,
    links: NeedLinks | undefined,
  ): Record<string, unknown> & { id: string } {
    const text = (field: ExportedField | undefined) => (field ? cellText(valueOf(record, field.name)) : '');
    const id = this.needIds.get(record.id) ?? this.needIdOf(record.readableId, record.id);
    const need: Record<string, unknown> & { id: string } = {
      id,
      title: sphinxSafe(titleWithoutId(text(shape.title), record.readableId) || record.name),
      // `description` is what needimport reads as the content in every Sphinx-Needs version.
      description: rstLiteralText(text(shape.description)),
      type: shape.needType,
      status: sphinxSafe(text(shape.status)) || null,
      tags: [optionName(shape.topic.name)],
    };
    // Where a needs_external_needs link leads (`<base_url>/<docname>.html#<id>`); needimport
    // ignores it and files the need under the importing document.
    if (shape.docname !== undefined) need.docname = shape.docname;
    for (const { option } of linkOptions.values()) need[option] = links?.byOption.get(option) ?? [];
    need[SUSPECT_LINKS_OPTION] = links?.suspect.join(', ') ?? '';
    need.rxs_record_id = record.id;
    need.rxs_record_version = sphinxSafe(record.version);
    need.rxs_topic = sphinxSafe(shape.topic.name);
    need.rxs_topic_revision_id = record.topicRevisionId;
    need.rxs_source_id = sphinxSafe(record.sourceId ?? '');
    for (const [name, option] of extraOptions) {
      need[option] = name === shape.description?.name ? '' : sphinxSafe(cellText(valueOf(record, name)));
    }
    return need;
  }

  /**
   * Outgoing links of each record to other exported records, by link option, and the suspect ones:
   * a trace a role names (and no mapping file link type) held by the record at the role's `from`
   * end under the role's option only, so that it reads once, with the forward name there and the
   * backward name (Sphinx-Needs' incoming) at the other end; any other trace by its source under
   * the link type a mapping file names, else `links`.
   */
  private linksBetweenNeeds(linkOptions: Map<string, LinkOption>): Map<string, NeedLinks> {
    const result = new Map<string, NeedLinks>();
    const add = (source: TraceEnd, target: TraceEnd, key: string, suspect: boolean) => {
      // Only traces between records of this export: Sphinx would report others as dead links.
      if (source.type !== RECORD_NODE_TYPE || target.type !== RECORD_NODE_TYPE) return;
      const targetId = this.needIds.get(target.id);
      if (targetId === undefined || !this.needIds.has(source.id)) return;
      const option = linkOptions.get(key)?.option ?? DEFAULT_LINK_OPTION;
      let links = result.get(source.id);
      if (!links) result.set(source.id, (links = { byOption: new Map(), suspect: [] }));
      const targets = links.byOption.get(option) ?? [];
      if (!targets.includes(targetId)) targets.push(targetId);
      links.byOption.set(option, targets);
      if (suspect && !links.suspect.includes(targetId)) links.suspect.push(targetId);
    };
    for (const trace of this.tracker.traces) {
      const { linkType, suspect } = trace;
      const role = linkType === undefined ? this.tracker.roles.of(trace) : undefined;
      if (role) add(role.from, role.to, roleKey(role.role.id), suspect);
      else add(trace.source, trace.target, linkType ?? DEFAULT_LINK_OPTION, suspect);
    }
    return result;
  }
}

/** A need's outgoing links: the need ids by link option, and those whose trace is suspect. */
interface NeedLinks {
  byOption: Map<string, string[]>;
  suspect: string[];
}

/** How the records of one topic become needs. */
interface NeedShape {
  topic: ExportedTopic;
  fields: ExportedField[];
  needType: string;
  title: ExportedField | undefined;
  description: ExportedField | undefined;
  status: ExportedField | undefined;
  docname: string | undefined;
}

/**
 * A title without the leading id that gave the readable id ("REQ_001 — Sterilization …" →
 * "Sterilization …"), as the service's connector shows it; any other title as it is.
 */
function titleWithoutId(title: string, readableId: string): string {
  const leading = LEADING_ID_PATTERN.exec(title);
  if (leading?.[1] !== readableId) return title;
  return title.slice(leading[0].length).replace(/^[\s:–—-]+/, '') || title;
}

/**
 * The `needs_schema` Sphinx-Needs writes beside its needs (a JSON schema of one need): the fields
 * with their types and defaults, and which are extra options and link types (with `incoming`,
 * how the reverse direction reads), so a conf.py can declare them from the file.
 */
function needsSchema(
  extraOptions: [string, string][],
  linkOptions: Iterable<LinkOption>,
  withDocname: boolean,
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, option] of extraOptions) {
    properties[option] = {
      type: 'string',
      description: sphinxSafe(`The field "${name}"`),
      field_type: 'extra',
      default: '',
    };
  }
  for (const option of RECORD_OPTIONS) {
    properties[option] = {
      type: 'string',
      description: 'The exported record',
      field_type: 'extra',
      default: '',
    };
  }
  properties[SUSPECT_LINKS_OPTION] = {
    type: 'string',
    description:
      'Need ids of suspect links from this record: a record at either end changed since the trace was made or reviewed',
    field_type: 'extra',
    default: '',
  };
  for (const { option, incoming, outgoing } of linkOptions) {
    properties[option] = {
      type: 'array',
      items: { type: 'string' },
      description: sphinxSafe(
        outgoing === undefined
          ? `Traces from this record (${incoming} in the other direction)`
          : `Records this record ${outgoing} (${incoming} in the other direction)`,
      ),
      field_type: 'links',
      incoming: sphinxSafe(incoming),
      ...(outgoing !== undefined && { outgoing: sphinxSafe(outgoing) }),
      default: [],
    };
  }
  properties.id = { type: 'string', field_type: 'core' };
  properties.title = { type: 'string', field_type: 'core' };
  properties.type = { type: 'string', field_type: 'core' };
  properties.status = { type: ['string', 'null'], field_type: 'core', default: null };
  properties.tags = { type: 'array', items: { type: 'string' }, field_type: 'core', default: [] };
  if (withDocname)
    properties.docname = {
      type: 'string',
      description: 'The Sphinx document the need is shown in, without suffix',
      field_type: 'core',
    };
  return { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties };
}
