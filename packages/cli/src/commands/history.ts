import { Command } from 'commander';
import type { RecordVersion } from '@rxs/contract';
import { jsonEqual } from '@rxs/contract/plain';
import { NotFoundError, type RxsClient } from '@rxs/client';
import { buildFieldMap, RecordMapper } from '@rxs/exchange/export';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';
import { positiveInteger } from './export.js';

interface HistoryOptions extends ConnectionOptions {
  json?: boolean;
  limit?: string;
}

/** Longest value shown in a change line; the JSON output has them whole. */
const SHOWN_VALUE = 120;

export function historyCommand(): Command {
  const command = new Command('history')
    .description("A record's audit trail: every version, newest first, with who, when, why and what changed")
    .argument('<record-id>', 'the record id (_id); a deleted record keeps its history')
    .option('--json', 'the versions as the service gives them (a JSON array, each with the whole record)')
    .option('--limit <n>', 'at most this many versions (newest first)')
    .addHelpText(
      'after',
      `
Each version is the record as one change left it: created, updated, deleted, moved (a re-approval of
its topic moved it to the new revision) or restored. The text output names the fields that changed
against the version before, by their semantic names (as exports name them).

Examples:
  rxs history --profile prod 6b03f3c2a1b4c5d6e7f80912
  rxs history --profile prod 6b03f3c2a1b4c5d6e7f80912 --json | jq '.[0].reason'`,
    );
  addConnectionOptions(command);
  return command.action(async (recordId: string, options: HistoryOptions) => {
    const client = clientFor(resolveConnection(options));
    const limit = positiveInteger(options.limit, '--limit', 1);
    const versions = take(client.records.listRecordVersions(recordId), limit);
    try {
      if (options.json) await printJson(versions);
      else await printText(client, versions);
    } catch (error) {
      if (error instanceof NotFoundError)
        throw new UserError(
          `Record ${recordId} has no history in your tenant: check the record id (the _id of an export).`,
        );
      throw error;
    }
  });
}

async function* take<T>(items: AsyncIterable<T>, limit: number | undefined): AsyncGenerator<T> {
  let count = 0;
  if (limit === 0) return;
  for await (const item of items) {
    yield item;
    if (limit !== undefined && ++count >= limit) return;
  }
}

/** A JSON array written version by version: a long history is never held whole. */
async function printJson(versions: AsyncIterable<RecordVersion>): Promise<void> {
  let first = true;
  for await (const version of versions) {
    process.stdout.write(`${first ? '[\n' : ',\n'}${JSON.stringify(version)}`);
    first = false;
  }
  process.stdout.write(first ? '[]\n' : '\n]\n');
}

/**
 * Newest first, each version compared with the one before it (its successor in the listing), so
 * a version's lines are printed once the next (older) one arrived; values by semantic name.
 */
async function printText(client: RxsClient, versions: AsyncIterable<RecordVersion>): Promise<void> {
  const mappers = new Map<string, Promise<RecordMapper | undefined>>();
  const valuesOf = async (version: RecordVersion): Promise<Record<string, unknown>> => {
    const revisionId = version.record.context?.knowledge_unit_topic_id ?? '';
    let mapper = mappers.get(revisionId);
    if (!mapper) {
      mapper = client.techdoc.getTopic(revisionId).then(
        (topic) => new RecordMapper(buildFieldMap(topic.knowledge_topic_schema)),
        () => undefined,
      );
      mappers.set(revisionId, mapper);
    }
    const data = version.record.data;
    return (
      (await mapper)?.map(version.record).record.values ?? (typeof data === 'object' && data ? data : {})
    );
  };
  let pending: { version: RecordVersion; values: Record<string, unknown> } | undefined;
  let count = 0;
  for await (const version of versions) {
    const values = await valuesOf(version);
    if (pending) process.stdout.write(describe(pending.version, pending.values, { version, values }));
    pending = { version, values };
    count++;
  }
  if (pending) process.stdout.write(describe(pending.version, pending.values, undefined));
  if (count === 0) process.stdout.write('No versions.\n');
}

function describe(
  version: RecordVersion,
  values: Record<string, unknown>,
  before: { version: RecordVersion; values: Record<string, unknown> } | undefined,
): string {
  const who = version.user_email ?? version.user_id;
  const how = version.key_id ? `API key ${version.key_id}` : version.via;
  const lines = [`#${version.n} ${version.action}  ${version.at}  by ${who} (${how})`];
  // A reason may hold line breaks: its further lines are indented, so none can pass for a version.
  if (version.reason)
    lines.push(`  reason: ${printable(version.reason).replace(/\r?\n|\r/g, '\n          ')}`);
  const record = version.record;
  if (!before) {
    lines.push(`  name: ${shown(record.name)}, version ${record.version}`);
  } else {
    const previous = before.version.record;
    if (previous.name !== record.name) lines.push(`  name: ${shown(previous.name)} → ${shown(record.name)}`);
    const revisionBefore = previous.context?.knowledge_unit_topic_id;
    const revisionNow = record.context?.knowledge_unit_topic_id;
    if (revisionBefore !== revisionNow) lines.push(`  topic revision: ${revisionBefore} → ${revisionNow}`);
    for (const name of new Set([...Object.keys(before.values), ...Object.keys(values)])) {
      if (jsonEqual(before.values[name], values[name])) continue;
      lines.push(`  ${name}: ${shown(before.values[name])} → ${shown(values[name])}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Text the terminal shows as text: control characters (an escape sequence in a record could move
 * the cursor or rewrite earlier lines) are written as \u escapes; line breaks are left to the caller.
 */
export function printable(text: string): string {
  return text.replace(
    /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A value on one line, shortened: text as JSON (quotes and escaped line breaks), absent as "—". */
function shown(value: unknown): string {
  if (value === undefined) return '—';
  const text = printable(JSON.stringify(value) ?? String(value));
  return text.length > SHOWN_VALUE ? `${text.slice(0, SHOWN_VALUE - 1)}…` : text;
}
