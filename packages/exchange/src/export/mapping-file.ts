import { readFile } from 'node:fs/promises';
import { MappingError } from '../mapping/errors.js';
import {
  defaultPresentation,
  LEADING_ID_PATTERN,
  type IdentifierRule,
  type IdentifierSource,
} from './identity.js';
import type { ExportedField, LinkType, TopicPresentation } from './model.js';
import type { ExportMapping, TopicRef } from './procedure.js';
import { sphinxDocnameMistake } from './writers/needs.js';

/**
 * Mapping files: how each topic appears in requirements tools (Sphinx-Needs type and id prefix,
 * ReqIF type, title/description/status fields, identifier rule) and how links between topics are
 * named. JSON with `//` and `/* *\/` comments; the keys are described in docs/mapping.md.
 */

/** One mistake in a mapping file, with its place (`topics[0].identifier.pattern`). */
export interface MappingProblem {
  place: string;
  message: string;
}

/** A mapping file that cannot be used: every mistake found, each with its place in the file. */
export class MappingFileError extends MappingError {
  override name = 'MappingFileError';
  override readonly code = 'RXS_ERR_MAPPING_FILE';

  constructor(
    readonly file: string,
    readonly problems: MappingProblem[],
  ) {
    super(
      `The mapping file ${file} has ${problems.length === 1 ? 'a mistake' : `${problems.length} mistakes`}; ` +
        `correct ${problems.length === 1 ? 'it' : 'them'} and export again (docs/mapping.md describes every key):\n` +
        problems.map((p) => `  ${p.place}: ${p.message}`).join('\n'),
    );
  }
}

/** Where a record's readable id comes from, as a mapping file names it. */
export type MappingIdentifierSource = 'title' | 'name' | 'whole-name' | 'record-id' | { field: string };

export interface TopicMappingEntry {
  /** Matched against the topic's name or history id (either is enough; both survive re-approvals). */
  name?: string;
  historyId?: string;
  needType?: string;
  idPrefix?: string;
  reqifType?: string;
  /** The Sphinx document its needs are shown in (Sphinx-Needs `docname`, see `sphinxDocnameMistake`). */
  docname?: string;
  /** Semantic field names; `null` says the topic has no such field. */
  fields?: { title?: string | null; description?: string | null; status?: string | null };
  identifier?: { from?: MappingIdentifierSource[]; pattern?: string };
}

export interface LinkMappingEntry {
  /** Topic (name or history id) of the trace's source records. */
  from: string;
  /** Topic (name or history id) of the trace's target records. */
  to: string;
  name: string;
  incoming?: string;
}

export interface MappingFileContent {
  topics: TopicMappingEntry[];
  links: LinkMappingEntry[];
}

/**
 * Sphinx-Needs need types and link names become directive and option names: a lower-case letter,
 * then lower-case letters, digits, `_` and `-`.
 */
export const OPTION_NAME = /^[a-z][a-z0-9_-]*$/;
/** An id prefix must itself start an id (see VALID_ID in identity.ts). */
const ID_PREFIX = /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/;
/** Need options Sphinx-Needs already has: a link type of one of these names would shadow it. */
const RESERVED_OPTIONS = new Set([
  'id',
  'title',
  'type',
  'status',
  'tags',
  'links',
  'content',
  'description',
  'layout',
  'style',
  'template',
  'collapse',
  'hide',
  'delete',
  'constraints',
  'parent_needs',
]);

const TOPIC_KEYS = [
  'name',
  'historyId',
  'needType',
  'idPrefix',
  'reqifType',
  'docname',
  'fields',
  'identifier',
];
const FIELD_KEYS = ['title', 'description', 'status'] as const;
const IDENTIFIER_KEYS = ['from', 'pattern'];
const SOURCE_WORDS = ['title', 'name', 'whole-name', 'record-id'];
const LINK_KEYS = ['from', 'to', 'name', 'incoming'];

/**
 * Replaces `//` and `/* *\/` comments outside strings, and trailing commas before `}` or `]`, by
 * spaces (keeping line breaks), so JSON.parse reads the rest and its positions still point into the
 * original text.
 */
export function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      let j = i;
      while (j < text.length && text[j] !== '\n') j++;
      out += ' '.repeat(j - i);
      i = j;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const j = end === -1 ? text.length : end + 2;
      out += text.slice(i, j).replace(/[^\n]/g, ' ');
      i = j;
    } else if (c === ',' && closesNext(text, i + 1)) {
      out += ' ';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Only blanks and comments from `from` to a `}` or `]`: a comma before it is a trailing one. */
const TRAILING = /(?:\s|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*[}\]]/y;
function closesNext(text: string, from: number): boolean {
  TRAILING.lastIndex = from;
  return TRAILING.test(text);
}

/** "line 3, column 7" for a JSON.parse error that names a position. */
function lineAndColumn(text: string, message: string): string | undefined {
  const position = /position (\d+)/.exec(message);
  if (!position) return undefined;
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  return `line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Number of capturing groups of a compiled regex (an empty alternative always matches). */
function captureGroups(regex: RegExp): number {
  return new RegExp(`${regex.source}|`).exec('')!.length - 1;
}

function topicLabel(entry: unknown): string {
  if (!isObject(entry)) return '';
  const name = typeof entry.name === 'string' ? entry.name : entry.historyId;
  return typeof name === 'string' ? ` ("${name}")` : '';
}

/** Checks the file's shape and values: every mistake that needs no knowledge of the topics. */
function validate(raw: unknown, problems: MappingProblem[]): MappingFileContent {
  const problem = (place: string, message: string) => problems.push({ place, message });
  const unknownKeys = (value: Record<string, unknown>, known: readonly string[], place: string) => {
    for (const key of Object.keys(value))
      if (!known.includes(key))
        problem(`${place}.${key}`, `unknown key "${key}"; the keys here are ${known.join(', ')}.`);
  };
  if (!isObject(raw)) {
    problem('(top level)', 'the file must hold one JSON object with "topics" and/or "links".');
    return { topics: [], links: [] };
  }
  unknownKeys(raw, ['$schema', 'topics', 'links'], '(top level)');
  const topics: TopicMappingEntry[] = [];
  const links: LinkMappingEntry[] = [];

  if (raw.topics !== undefined && !Array.isArray(raw.topics))
    problem('topics', 'must be a list of topic entries.');
  const byName = new Map<string, string>();
  const byHistory = new Map<string, string>();
  (Array.isArray(raw.topics) ? raw.topics : []).forEach((entry: unknown, index: number) => {
    const place = `topics[${index}]${topicLabel(entry)}`;
    if (!isObject(entry))
      return problem(place, 'must be an object such as {"name": "System Requirements", ...}.');
    unknownKeys(entry, TOPIC_KEYS, place);
    const text = (key: string, check?: (value: string) => string | undefined): string | undefined => {
      const value = entry[key];
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || value.trim() === '') {
        problem(`${place}.${key}`, 'must be a non-empty text.');
        return undefined;
      }
      const mistake = check?.(value);
      if (mistake) problem(`${place}.${key}`, mistake);
      return mistake ? undefined : value;
    };
    const name = text('name');
    const historyId = text('historyId');
    if (entry.name === undefined && entry.historyId === undefined)
      problem(place, 'names no topic: give its "name" or its "historyId" (or both).');
    for (const [value, seen, key] of [
      [name, byName, 'name'],
      [historyId, byHistory, 'historyId'],
    ] as const) {
      if (value === undefined) continue;
      const first = seen.get(value);
      if (first)
        problem(`${place}.${key}`, `the topic "${value}" already has an entry (${first}); merge the two.`);
      else seen.set(value, place);
    }
    const result: TopicMappingEntry = {
      name,
      historyId,
      needType: text('needType', (v) =>
        OPTION_NAME.test(v)
          ? undefined
          : `"${v}" is not a Sphinx-Needs type: use a lower-case letter, then lower-case letters, digits, "_" or "-" (e.g. "req", "test").`,
      ),
      idPrefix: text('idPrefix', (v) =>
        ID_PREFIX.test(v)
          ? undefined
          : `"${v}" cannot start an id: use a letter, then letters, digits, "_", "." or "-" (at most 32, e.g. "REQ").`,
      ),
      reqifType: text('reqifType'),
      docname: text('docname', sphinxDocnameMistake),
    };

    if (entry.fields !== undefined) {
      if (!isObject(entry.fields))
        problem(
          `${place}.fields`,
          'must be an object such as {"title": "Name", "description": "Description"}.',
        );
      else {
        unknownKeys(entry.fields, FIELD_KEYS, `${place}.fields`);
        result.fields = {};
        for (const key of FIELD_KEYS) {
          const value = entry.fields[key];
          if (value === undefined) continue;
          if (value === null || (typeof value === 'string' && value.trim() !== ''))
            result.fields[key] = value;
          else problem(`${place}.fields.${key}`, 'must be the semantic name of a field, or null for none.');
        }
      }
    }

    if (entry.identifier !== undefined) {
      const at = `${place}.identifier`;
      if (!isObject(entry.identifier))
        problem(at, 'must be an object such as {"from": ["title", "name"], "pattern": "^(REQ_\\\\d+)"}.');
      else {
        unknownKeys(entry.identifier, IDENTIFIER_KEYS, at);
        result.identifier = {};
        const from = entry.identifier.from;
        if (from !== undefined) {
          if (!Array.isArray(from) || from.length === 0)
            problem(
              `${at}.from`,
              `must be a non-empty list of ${SOURCE_WORDS.join(', ')} or {"field": NAME}.`,
            );
          else {
            const sources: MappingIdentifierSource[] = [];
            from.forEach((source: unknown, i: number) => {
              const sourcePlace = `${at}.from[${i}]`;
              if (typeof source === 'string' && SOURCE_WORDS.includes(source))
                sources.push(source as MappingIdentifierSource);
              else if (
                isObject(source) &&
                typeof source.field === 'string' &&
                Object.keys(source).length === 1
              )
                sources.push({ field: source.field });
              else
                problem(
                  sourcePlace,
                  `${JSON.stringify(source)} is not a source; use one of ${SOURCE_WORDS.join(', ')} or {"field": NAME}.`,
                );
              if (source === 'record-id' && i < from.length - 1)
                problem(
                  sourcePlace,
                  '"record-id" always gives an id, so the sources after it are never tried; put it last.',
                );
            });
            result.identifier.from = sources;
          }
        }
        const pattern = entry.identifier.pattern;
        if (pattern !== undefined) {
          if (typeof pattern !== 'string' || pattern === '')
            problem(`${at}.pattern`, 'must be a regular expression, as a JSON text.');
          else {
            let regex: RegExp | undefined;
            try {
              regex = new RegExp(pattern);
            } catch (error) {
              problem(`${at}.pattern`, `is not a valid regular expression: ${(error as Error).message}.`);
            }
            if (regex && captureGroups(regex) !== 1)
              problem(
                `${at}.pattern`,
                `has ${captureGroups(regex)} capture groups; it needs exactly one, around the id (e.g. "^(REQ_\\\\d+)").`,
              );
            else if (regex) result.identifier.pattern = pattern;
          }
        }
      }
    }
    topics.push(result);
  });

  if (raw.links !== undefined && !Array.isArray(raw.links))
    problem('links', 'must be a list of link entries.');
  const pairs = new Map<string, string>();
  (Array.isArray(raw.links) ? raw.links : []).forEach((entry: unknown, index: number) => {
    const place = `links[${index}]`;
    if (!isObject(entry))
      return problem(
        place,
        'must be an object such as {"from": "Verification Tests", "to": "System Requirements", "name": "verifies"}.',
      );
    unknownKeys(entry, LINK_KEYS, place);
    let ok = true;
    for (const key of ['from', 'to', 'name'] as const) {
      if (typeof entry[key] !== 'string' || (entry[key] as string).trim() === '') {
        problem(
          `${place}.${key}`,
          key === 'name'
            ? 'must be the link type name (e.g. "verifies").'
            : 'must name a topic (its name or history id).',
        );
        ok = false;
      }
    }
    if (
      entry.incoming !== undefined &&
      (typeof entry.incoming !== 'string' || entry.incoming.trim() === '')
    ) {
      problem(`${place}.incoming`, 'must be a text such as "verified by".');
      ok = false;
    }
    const name = entry.name;
    if (typeof name === 'string' && name.trim() !== '') {
      if (!OPTION_NAME.test(name)) {
        problem(
          `${place}.name`,
          `"${name}" is not a Sphinx-Needs link option name: use a lower-case letter, then lower-case letters, digits, "_" or "-" (e.g. "verifies").`,
        );
        ok = false;
      } else if (RESERVED_OPTIONS.has(name)) {
        problem(`${place}.name`, `"${name}" is a need option Sphinx-Needs already has; choose another name.`);
        ok = false;
      }
    }
    if (!ok) return;
    const link = entry as unknown as LinkMappingEntry;
    const pair = `${link.from}\u0000${link.to}`;
    const first = pairs.get(pair);
    if (first)
      problem(place, `the link from "${link.from}" to "${link.to}" is already named in ${first}; keep one.`);
    else pairs.set(pair, place);
    links.push({
      from: link.from,
      to: link.to,
      name: link.name,
      ...(link.incoming && { incoming: link.incoming }),
    });
  });
  return { topics, links };
}

/** Reads a mapping file's text; throws `MappingFileError` with every mistake it finds. */
export function parseMappingFile(text: string, file = 'mapping file'): MappingFileContent {
  let raw: unknown;
  try {
    raw = JSON.parse(stripJsonComments(text));
  } catch (error) {
    const message = (error as Error).message;
    const where = lineAndColumn(text, message);
    throw new MappingFileError(file, [
      { place: where ?? '(file)', message: `not valid JSON (comments are allowed): ${message}.` },
    ]);
  }
  const problems: MappingProblem[] = [];
  const content = validate(raw, problems);
  if (problems.length > 0) throw new MappingFileError(file, problems);
  return content;
}

const matches = (ref: TopicRef, nameOrId: string | undefined) =>
  nameOrId !== undefined && (nameOrId === ref.name || nameOrId === ref.historyId);

/**
 * An `ExportMapping` from a mapping file. Field names are checked when the export meets the topic
 * (they are known only then): a wrong one stops the export with every mistake of that entry.
 * `warningsFor` names the entries the export did not use.
 */
export class FileExportMapping implements ExportMapping {
  private readonly used = new Set<number>();

  constructor(
    readonly content: MappingFileContent,
    readonly file = 'mapping file',
  ) {}

  private entryOf(topic: TopicRef): { entry: TopicMappingEntry; place: string } | undefined {
    const found = this.content.topics
      .map((entry, index) => ({ entry, index }))
      .filter(({ entry }) => matches(topic, entry.historyId) || matches(topic, entry.name));
    if (found.length > 1)
      throw new MappingFileError(this.file, [
        {
          place: found.map(({ index }) => `topics[${index}]`).join(' and '),
          message: `both match the topic "${topic.name}" (history id ${topic.historyId}), one by name and one by history id; merge them.`,
        },
      ]);
    if (found.length === 0) return undefined;
    const { entry, index } = found[0]!;
    this.used.add(index);
    return { entry, place: `topics[${index}] ("${entry.name ?? entry.historyId}")` };
  }

  topic(
    topic: TopicRef,
    fields: readonly ExportedField[],
  ): { presentation: TopicPresentation; rule: IdentifierRule } {
    const defaults = defaultPresentation(topic.name, fields);
    const found = this.entryOf(topic);
    if (!found) return { presentation: defaults, rule: ruleOf(undefined, defaults) };
    const { entry, place } = found;
    const names = fields.map((f) => f.name);
    const problems: MappingProblem[] = [];
    const checkField = (name: string, at: string) => {
      if (!names.includes(name))
        problems.push({
          place: at,
          message: `"${topic.name}" has no field "${name}"; its semantic field names are: ${names.map((n) => `"${n}"`).join(', ')}.`,
        });
    };
    const presentation: TopicPresentation = {
      ...defaults,
      needType: entry.needType ?? defaults.needType,
      idPrefix: entry.idPrefix ?? (entry.needType ? entry.needType.toUpperCase() : defaults.idPrefix),
      reqifTypeName: entry.reqifType ?? defaults.reqifTypeName,
      ...(entry.docname !== undefined && { docname: entry.docname }),
    };
    for (const key of FIELD_KEYS) {
      const name = entry.fields?.[key];
      if (name === undefined) continue;
      if (name !== null) checkField(name, `${place}.fields.${key}`);
      presentation[`${key}Field`] = name ?? undefined;
    }
    entry.identifier?.from?.forEach((source, i) => {
      if (typeof source === 'object') checkField(source.field, `${place}.identifier.from[${i}].field`);
    });
    if (problems.length > 0) throw new MappingFileError(this.file, problems);
    return { presentation, rule: ruleOf(entry, presentation) };
  }

  linkType(source: TopicRef, target: TopicRef): LinkType | undefined {
    const link = this.content.links.find((l) => matches(source, l.from) && matches(target, l.to));
    if (!link) return undefined;
    return {
      name: link.name,
      incoming: link.incoming ?? `${link.name} incoming`,
      sourceTopicHistoryId: source.historyId,
      targetTopicHistoryId: target.historyId,
    };
  }

  /** Warnings for the topic entries, and link ends, that name no topic of this export. */
  warningsFor(exported: readonly TopicRef[]): string[] {
    const warnings: string[] = [];
    this.content.topics.forEach((entry, index) => {
      if (this.used.has(index)) return;
      warnings.push(
        `The mapping file ${this.file} has settings for the topic "${entry.name ?? entry.historyId}" (topics[${index}]), which is not in this export; they were not used. Check its name or history id if you meant to export it.`,
      );
    });
    const known = (nameOrId: string) =>
      exported.some((ref) => matches(ref, nameOrId)) ||
      this.content.topics.some((t) => t.name === nameOrId || t.historyId === nameOrId);
    this.content.links.forEach((link, index) => {
      for (const end of [link.from, link.to])
        if (!known(end))
          warnings.push(
            `The mapping file ${this.file} names the link "${link.name}" (links[${index}]) for the topic "${end}", which is neither in this export nor in its topics; check the name.`,
          );
    });
    return warnings;
  }
}

function ruleOf(entry: TopicMappingEntry | undefined, presentation: TopicPresentation): IdentifierRule {
  const from = entry?.identifier?.from;
  const sources: IdentifierSource[] = [];
  for (const source of from ?? ['title', 'name', 'whole-name']) {
    if (source === 'record-id') break;
    sources.push(source);
  }
  const pattern = entry?.identifier?.pattern;
  return {
    sources,
    pattern: pattern === undefined ? LEADING_ID_PATTERN : new RegExp(pattern),
    prefix: presentation.idPrefix,
  };
}

/** The mapping of a mapping file's text (`file` names it in messages). */
export function exportMappingFromText(text: string, file = 'mapping file'): FileExportMapping {
  return new FileExportMapping(parseMappingFile(text, file), file);
}

/** Reads and checks a mapping file; a missing or unreadable file is a `MappingFileError` too. */
export async function loadMappingFile(path: string): Promise<FileExportMapping> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new MappingFileError(path, [
      {
        place: '(file)',
        message:
          code === 'ENOENT'
            ? 'there is no such file; check the path (docs/mapping.example.jsonc is an example to start from).'
            : `cannot be read (${code ?? String(error)}).`,
      },
    ]);
  }
  return exportMappingFromText(text, path);
}
