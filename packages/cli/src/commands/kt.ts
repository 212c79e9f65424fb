import { Command, Option } from 'commander';
import type { KnowledgeTopicRevision } from '@rxs/contract';
import { NotFoundError, RxsApiError, type RxsClient } from '@rxs/client';
import { buildFieldMap, type ExportedField } from '@rxs/exchange/export';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';

interface KtListOptions extends ConnectionOptions {
  name?: string;
  status?: 'draft' | 'approved';
  json?: boolean;
}

interface KtShowOptions extends ConnectionOptions {
  json?: boolean;
}

/** A topic as `rxs kt list` shows it: its ids, its current revision and how many records it holds. */
export interface TopicSummary {
  name: string;
  type: string;
  historyId: string;
  /** The revision the records live under (the newest approved one, or the draft of a new topic). */
  currentRevisionId: string;
  version: string;
  status: string;
  /** A newer draft being edited, if any. */
  openDraftId: string | null;
  /** Records under the current revision; null when the service cannot count them. */
  records: number | null;
}

/** `rxs kt list|show`: find the ids of topics and the fields of their forms. */
export function ktCommand(): Command {
  const command = new Command('kt')
    .description('Knowledge topics: find their ids, and the fields of their forms by semantic name')
    .addHelpText(
      'after',
      `
The revision id (what --kt takes) changes with every approval; the history id stays the topic's.
Field names are the semantic names exports use as column names and ReqIF attributes.

Examples:
  rxs kt list --profile prod --name requirements
  rxs kt show --profile prod 6b03f3c2a1b4c5d6e7f80912
  rxs kt show --profile prod 6b03f3c2a1b4c5d6e7f80912 --json | jq '.fields[].name'`,
    );

  const list = new Command('list')
    .description("The tenant's topics: history id, current revision id, version, status, record count")
    .option('--name <text>', 'only topics whose name contains this (any case)')
    .addOption(
      new Option('--status <status>', 'only topics whose current revision has it').choices([
        'draft',
        'approved',
      ]),
    )
    .option('--json', 'as a JSON array');
  addConnectionOptions(list).action(async (options: KtListOptions) => {
    const client = clientFor(resolveConnection(options));
    const topics: TopicSummary[] = [];
    for await (const revision of client.techdoc.iterateTopics({
      current: true,
      ...(options.name !== undefined && { name: options.name }),
      ...(options.status !== undefined && { status: options.status }),
    }))
      topics.push(await summarize(client, revision));
    if (options.json) {
      process.stdout.write(`${JSON.stringify(topics, null, 2)}\n`);
      return;
    }
    if (topics.length === 0) {
      process.stdout.write(
        options.name !== undefined || options.status !== undefined
          ? 'No topic matches. Try without --name or --status.\n'
          : 'No topics yet in your tenant. Create one in the web app (Topics, New topic).\n',
      );
      return;
    }
    process.stdout.write(
      columns(
        ['NAME', 'HISTORY ID', 'CURRENT REVISION', 'VERSION', 'STATUS', 'RECORDS'],
        topics.map((t) => [
          t.name,
          t.historyId,
          t.currentRevisionId,
          t.version,
          t.openDraftId ? `${t.status} (draft ${t.openDraftId} open)` : t.status,
          t.records === null ? '?' : String(t.records),
        ]),
      ),
    );
  });

  const show = new Command('show')
    .description('One topic: both ids, its latest revision, and every field of its form')
    .argument('<id>', "a revision id, or the topic's history id (then its current revision is shown)")
    .option('--json', 'as JSON');
  addConnectionOptions(show).action(async (id: string, options: KtShowOptions) => {
    const client = clientFor(resolveConnection(options));
    const revision = await findRevision(client, id);
    const summary = await summarize(client, revision);
    const { fields, warnings } = buildFieldMap(revision.knowledge_topic_schema);
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify(
          {
            revisionId: revision._id,
            ...summary,
            version: revision.version,
            status: revision.status,
            latestRevisionId: revision.latest_or_latest_approved_revision_id,
            fields: fields.map(fieldJson),
            warnings,
          },
          null,
          2,
        )}\n`,
      );
      return;
    }
    process.stdout.write(showText(revision, summary, fields, warnings));
  });

  return command.addCommand(list).addCommand(show);
}

/** The revision `id` names, or the current revision of the topic whose history id it is. */
async function findRevision(client: RxsClient, id: string): Promise<KnowledgeTopicRevision> {
  if (!/^[0-9a-f]{24}$/.test(id))
    throw new UserError(
      `"${id}" is not a topic id: revision and history ids are 24 hexadecimal characters. List them with: rxs kt list`,
    );
  try {
    return await client.techdoc.getTopic(id);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  const [current] = await client.techdoc.listTopics({
    knowledge_topic_history_id: id,
    current: true,
    limit: 1,
  });
  if (current) return current;
  throw new UserError(
    `No topic in your tenant has the revision or history id ${id}. List the topics with: rxs kt list`,
  );
}

/** The topic of a revision, by its current revision (which any revision names). */
async function summarize(client: RxsClient, revision: KnowledgeTopicRevision): Promise<TopicSummary> {
  const currentRevisionId = revision.latest_revision_id;
  const openDraft = revision.latest_or_latest_approved_revision_id;
  return {
    name: revision.knowledge_topic_name,
    type: revision.type,
    historyId: revision.knowledge_topic_history_id,
    currentRevisionId,
    version: revision.version,
    status: revision.status,
    openDraftId: openDraft !== currentRevisionId ? openDraft : null,
    records: await recordCount(client, currentRevisionId),
  };
}

/** Records under a revision, or null from a service that cannot count them (`GET /records/count`). */
async function recordCount(client: RxsClient, revisionId: string): Promise<number | null> {
  try {
    return await client.records.countRecords({ context__knowledge_unit_topic_id: revisionId });
  } catch (error) {
    if (error instanceof RxsApiError && [404, 405, 422, 501].includes(error.status ?? 0)) return null;
    throw error;
  }
}

function fieldJson(field: ExportedField): Record<string, unknown> {
  return {
    key: field.key,
    name: field.name,
    type: field.type ?? null,
    label: field.label ?? null,
    ...(field.options && { values: field.options }),
    ...(field.itemFields && { itemFields: field.itemFields.map(fieldJson) }),
  };
}

function showText(
  revision: KnowledgeTopicRevision,
  summary: TopicSummary,
  fields: ExportedField[],
  warnings: string[],
): string {
  const lines = [
    `${revision.knowledge_topic_name} (${revision.type})`,
    `  history id        ${revision.knowledge_topic_history_id}`,
    `  this revision     ${revision._id}  version ${revision.version}, ${revision.status}`,
    `  current revision  ${summary.currentRevisionId}${summary.currentRevisionId === revision._id ? '' : '  (its records live there)'}`,
    `  latest revision   ${revision.latest_or_latest_approved_revision_id}${revision.latest_or_latest_approved_revision_id === summary.currentRevisionId ? '' : '  (a draft)'}`,
    `  records           ${summary.records === null ? 'unknown (the service cannot count them)' : summary.records}`,
    '',
  ];
  if (fields.length === 0) lines.push('Its form has no fields.', '');
  else {
    const rows: string[][] = [];
    const add = (field: ExportedField, indent: string) => {
      const values = field.options?.map((o) =>
        String(o.value) === o.label ? o.label : `${String(o.value)} (${o.label})`,
      );
      rows.push([indent + field.key, field.name, field.type ?? '', values?.join(', ') ?? '']);
      for (const item of field.itemFields ?? []) add(item, `${indent}  `);
    };
    for (const field of fields) add(field, '');
    lines.push(
      'Fields (the semantic name is the column of exports and the name rxs takes in --set and imports):',
      columns(['FORM KEY', 'SEMANTIC NAME', 'TYPE', 'ALLOWED VALUES'], rows).trimEnd(),
      '',
    );
  }
  for (const warning of warnings) lines.push(`Note: ${warning}`);
  lines.push(`Export it: rxs export --kt ${summary.currentRevisionId} --format csv --out topic.csv`, '');
  return lines.join('\n');
}

/** Rows as left-aligned columns, each as wide as its widest cell; line breaks in cells shown as ⏎. */
function columns(header: string[], rows: string[][]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => cell.replace(/\r?\n|\r/g, '⏎')));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => [...row[i]!].length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - [...cell].length)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
    .concat('\n');
}
