import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { ValidationError, type RxsClient } from '@rxs/client';
import {
  isNoChange,
  traceModelChanges,
  type TraceModel,
  type TraceModelPut,
  type TraceModelVersion,
  type TraceRole,
} from '@rxs/contract';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';

interface ShowOptions extends ConnectionOptions {
  json?: boolean;
}

interface SetOptions extends ConnectionOptions {
  reason?: string;
  json?: boolean;
}

interface HistoryOptions extends ConnectionOptions {
  limit: string;
  json?: boolean;
}

/** `rxs trace-model show|set|history`: the tenant's trace model, what the links between topics mean. */
export function traceModelCommand(): Command {
  const command = new Command('trace-model')
    .description('The trace model: what a trace between two topics means (verifies, implements, ...)')
    .addHelpText(
      'after',
      `
A role names the traces of one relation type between records of two topics, read both ways
("Verification Tests verifies System Requirements", "verified by"); traces keep their relation type.
Without --kt and --mapping, rxs trace-report takes its topics (in the order of the V) and its rules
from the model.

Examples:
  rxs trace-model show --profile prod
  rxs trace-model show --profile prod --json > model.json
  rxs trace-model set --profile prod model.json --reason "validation joins the V"
  rxs trace-model history --profile prod`,
    );

  const show = new Command('show')
    .description('The roles: names both ways, from topic → to topic, relation type, trace source')
    .option('--json', 'the model as JSON (the format rxs trace-model set reads)');
  addConnectionOptions(show).action(async (options: ShowOptions) => {
    const model = await clientFor(resolveConnection(options)).tracer.getTraceModel();
    process.stdout.write(options.json ? `${JSON.stringify(model, null, 2)}\n` : modelText(model));
  });

  const set = new Command('set')
    .description(
      'Replace the whole model with the one in FILE (JSON; - for standard input); prints what changed',
    )
    .argument(
      '<file>',
      'a JSON file as rxs trace-model show --json prints it (docs/trace-model.example.json)',
    )
    .option('--reason <text>', "why the model changes; kept in the model's history")
    .option('--json', 'the model after the change, as JSON')
    .addHelpText(
      'after',
      `
FILE holds {"roles": [...]} (and optionally "version": the change is then refused when the model
changed since that version). A topic is named by "topic_history_id", or by "topic_name" alone (its
exact name; rxs looks up its history id).`,
    );
  addConnectionOptions(set).action(async (file: string, options: SetOptions) => {
    const client = clientFor(resolveConnection(options));
    const wanted = await readModelFile(file);
    const before = await client.tracer.getTraceModel();
    const body: TraceModelPut = {
      version: wanted.version ?? before.version,
      roles: await withHistoryIds(client, wanted.roles),
      ...((options.reason ?? wanted.change_reason) && {
        change_reason: options.reason ?? wanted.change_reason,
      }),
    };
    let after: TraceModel;
    try {
      after = await client.tracer.putTraceModel(body);
    } catch (error) {
      if (error instanceof ValidationError)
        throw new UserError(
          `The trace model in ${file} was refused; nothing changed:\n${error.items.map((item) => `  ${placeOf(item.loc, body.roles)}: ${item.msg}`).join('\n')}`,
        );
      throw error;
    }
    process.stdout.write(options.json ? `${JSON.stringify(after, null, 2)}\n` : changesText(before, after));
  });

  const history = new Command('history')
    .description("The model's changes, newest first: version, when, who, why, what changed")
    .option('--limit <n>', 'versions to show (at most 100)', '20')
    .option('--json', 'as a JSON array');
  addConnectionOptions(history).action(async (options: HistoryOptions) => {
    const limit = Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new UserError(`--limit takes a whole number from 1 to 100, not "${options.limit}".`);
    const versions = await clientFor(resolveConnection(options)).tracer.traceModelHistory({ limit });
    process.stdout.write(
      options.json
        ? `${JSON.stringify(versions, null, 2)}\n`
        : versions.map(versionText).join('') || '(none)\n',
    );
  });

  return command.addCommand(show).addCommand(set).addCommand(history);
}

/** The model a file holds, shaped as far as rxs needs to read it; the service checks the rest. */
interface ModelFile {
  version?: number;
  change_reason?: string;
  roles: TraceRole[];
}

async function readModelFile(file: string): Promise<ModelFile> {
  const name = file === '-' ? 'standard input' : file;
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(`Cannot read ${name}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UserError(`${name} is not JSON: ${(error as Error).message}`);
  }
  const model = value as Partial<ModelFile> | null;
  if (model === null || typeof model !== 'object' || Array.isArray(model) || !Array.isArray(model.roles))
    throw new UserError(
      `${name} must hold one JSON object with "roles": [...] (see docs/trace-model.example.json).`,
    );
  if (model.version !== undefined && !Number.isInteger(model.version))
    throw new UserError(`"version" in ${name} must be the whole number of the version the file is based on.`);
  return model as ModelFile;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The roles with each topic named by its history id: a `topic_name` alone is looked up (exact name, current revisions). */
async function withHistoryIds(client: RxsClient, roles: TraceRole[]): Promise<TraceRole[]> {
  const found = new Map<string, string>();
  const historyIdOf = async (name: string): Promise<string> => {
    const known = found.get(name);
    if (known) return known;
    const histories = new Set<string>();
    for await (const revision of client.techdoc.iterateTopics({ name, current: true }))
      if (revision.knowledge_topic_name.trim().toLowerCase() === name.trim().toLowerCase())
        histories.add(revision.knowledge_topic_history_id);
    if (histories.size !== 1)
      throw new UserError(
        histories.size === 0
          ? `No topic is named "${name}"; check the name (rxs kt list) or give its "topic_history_id".`
          : `${histories.size} topics are named "${name}"; give the one you mean by its "topic_history_id".`,
      );
    const [id] = histories;
    found.set(name, id!);
    return id!;
  };
  const resolved: TraceRole[] = [];
  for (const role of roles) {
    if (role === null || typeof role !== 'object') {
      resolved.push(role);
      continue;
    }
    const copy = { ...role };
    for (const end of ['from', 'to'] as const) {
      const topic = role[end];
      if (
        topic &&
        typeof topic === 'object' &&
        !topic.topic_history_id &&
        typeof topic.topic_name === 'string'
      )
        copy[end] = { topic_history_id: await historyIdOf(topic.topic_name) };
    }
    resolved.push(copy);
  }
  return resolved;
}

/** `roles[2] (verifies).from.topic_history_id` for the service's `body.roles.2.from.topic_history_id`. */
function placeOf(loc: (string | number)[], roles: readonly TraceRole[]): string {
  const path = loc[0] === 'body' ? loc.slice(1) : loc;
  if (path[0] !== 'roles' || typeof path[1] !== 'number') return path.join('.') || '(the file)';
  const id = roles[path[1]]?.id;
  const rest = path.slice(2).join('.');
  return `roles[${path[1]}]${typeof id === 'string' ? ` (${id})` : ''}${rest ? `.${rest}` : ''}`;
}

const topicName = (topic: TraceRole['from']) => topic.topic_name ?? topic.topic_history_id;

/** "Verification Tests verifies System Requirements": how a role reads forward. */
function roleSentence(role: TraceRole): string {
  return `${topicName(role.from)} ${role.forward_name} ${topicName(role.to)}`;
}

/** Columns padded to their widest cell, two spaces apart. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function modelText(model: TraceModel): string {
  if (model.roles.length === 0)
    return `The trace model has no roles (version ${model.version}). Set one with rxs trace-model set FILE.\n`;
  const changed = model.updated_at ? `, changed ${model.updated_at}` : '';
  const rows = model.roles.map((role) => [
    role.id,
    `${role.forward_name} / ${role.backward_name}`,
    `${topicName(role.from)} → ${topicName(role.to)}`,
    role.relation_type,
    topicName(role.trace_source === 'from' ? role.from : role.to),
  ]);
  return `Trace model, version ${model.version}${changed}:\n\n${table(
    ['ROLE', 'FORWARD / BACKWARD', 'FROM → TO', 'RELATION TYPE', 'TRACE SOURCE'],
    rows,
  )}\n`;
}

/** What a change did, role by role. */
function changesText(before: TraceModel, after: TraceModel): string {
  const changes = traceModelChanges(before.roles, after.roles);
  if (isNoChange(changes))
    return `No changes: the trace model is already as the file says (version ${after.version}).\n`;
  const byId = (roles: TraceRole[]) => new Map(roles.map((role) => [role.id, role]));
  const [old, now] = [byId(before.roles), byId(after.roles)];
  const line = (mark: string, role: TraceRole) =>
    `  ${mark} ${role.id}: ${roleSentence(role)} (${role.relation_type}, source: ${role.trace_source})`;
  return [
    `Trace model version ${after.version} (was ${before.version}):`,
    ...changes.added.map((id) => line('+', now.get(id)!)),
    ...changes.changed.flatMap((id) => [line('-', old.get(id)!), line('+', now.get(id)!)]),
    ...changes.removed.map((id) => line('-', old.get(id)!)),
    ...(changes.reordered ? ['  the order of the roles changed (the order of the V)'] : []),
    '',
  ].join('\n');
}

function versionText(version: TraceModelVersion): string {
  const { added, removed, changed, reordered } = version.changes;
  const what = [
    ...added.map((id) => `+${id}`),
    ...changed.map((id) => `~${id}`),
    ...removed.map((id) => `-${id}`),
    ...(reordered ? ['reordered'] : []),
  ].join(' ');
  const why = version.reason ? ` — ${version.reason.replace(/\s+/g, ' ')}` : '';
  return `v${version.version}  ${version.at}  by ${version.user_email ?? version.user_id}  ${what || '(no change)'}${why}\n`;
}
