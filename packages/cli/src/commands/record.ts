import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { isObjectId, type ServiceRecord } from '@rxs/contract';
import { ConflictError, NotFoundError, type RxsClient } from '@rxs/client';
import {
  buildFieldMap,
  convertValue,
  FieldNameError,
  FieldResolver,
  FieldValueError,
  setFieldValue,
} from '@rxs/exchange/export';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';

interface RecordWriteOptions extends ConnectionOptions {
  name?: string;
  set: string[];
  dataFile?: string;
  reason?: string;
  idempotencyKey?: string;
  json?: boolean;
}

interface RecordCreateOptions extends RecordWriteOptions {
  kt: string;
}

interface RecordUpdateOptions extends RecordWriteOptions {
  expectVersion?: string;
}

const SET_HELP = "a field's value: 'Semantic name=value' or 'form_key=value' (repeat)";
/** Repeated --set, each whole: values may hold commas (a checklist's values are split later). */
const append = (value: string, previous: string[]) => [...previous, value];

/** `rxs record create|update`: write one record from the command line (the CI write-back). */
export function recordCommand(): Command {
  const command = new Command('record')
    .description('Write one record: fields by the semantic names exports use, values converted to the form')
    .addHelpText(
      'after',
      `
Fields are named as exports name them (the semantic name; rxs kt show ID lists them) or by their
form key. Values are converted to what the field's component stores: numbers, true/false for a
checkbox, an option by its value or label, several options separated by commas (or a JSON list),
a dynamic list as JSON. --data-file gives the data as a JSON object (keys by name or form key);
--set wins over it.

Examples:
  rxs record create --profile prod --kt REVISION_ID --name "Release 2.4.0" \\
    --set "Commit=$GITHUB_SHA" --set "Gate result=passed" --set "Evidence=$RUN_URL"
  rxs record update --profile prod RECORD_ID --set "Status=verified" --reason "Test run 512 passed"`,
    );

  const create = new Command('create')
    .description('Create a record under a KT revision and print its id')
    .requiredOption('--kt <revision-id>', 'the KT revision the record belongs to (rxs kt list)')
    .requiredOption('--name <name>', "the record's name")
    .option('--set <name=value>', SET_HELP, append, [])
    .option('--data-file <file.json>', 'the data as a JSON object, keys by semantic name or form key')
    .option('--reason <text>', "why, kept in the record's history")
    .option(
      '--idempotency-key <key>',
      'make a re-run safe: the same key within 24 hours answers the record made the first time, e.g. the CI run id (default: a new key, so retries never create twice)',
    )
    .option('--json', 'print the created record as JSON');
  addConnectionOptions(create).action(async (options: RecordCreateOptions) => {
    if (!isObjectId(options.kt))
      throw new UserError(
        `--kt "${options.kt}" is not a revision id (24 hexadecimal characters): see rxs kt list.`,
      );
    const client = clientFor(resolveConnection(options));
    const resolver = await resolverOf(client, options.kt);
    const data = await dataOf(resolver, options, {});
    const created = await client.records.createRecord(
      {
        name: options.name!,
        form: {},
        data,
        context: { knowledge_unit_topic_id: options.kt },
        ...(options.reason !== undefined && { change_reason: options.reason }),
      },
      { idempotencyKey: options.idempotencyKey ?? randomUUID() },
    );
    printRecord(created, options.json);
  });

  const update = new Command('update')
    .description("Change a record's fields (and name); refused when it changed since it was read")
    .argument('<record-id>', 'the record id (_id)')
    .option('--set <name=value>', SET_HELP, append, [])
    .option('--data-file <file.json>', 'data as a JSON object, keys by semantic name or form key')
    .option('--name <name>', 'a new name')
    .option(
      '--expect-version <version>',
      'change it only if it is still at this version (default: the version read just before)',
    )
    .option('--reason <text>', "why, kept in the record's history")
    .option('--json', 'print the changed record as JSON');
  addConnectionOptions(update).action(async (id: string, options: RecordUpdateOptions) => {
    if (!isObjectId(id))
      throw new UserError(`"${id}" is not a record id (24 hexadecimal characters, the _id of an export).`);
    if (options.set.length === 0 && options.dataFile === undefined && options.name === undefined)
      throw new UserError('Nothing to change: give --set, --data-file or --name.');
    const client = clientFor(resolveConnection(options));
    let current: ServiceRecord;
    try {
      current = await client.records.getRecord(id);
    } catch (error) {
      if (error instanceof NotFoundError)
        throw new UserError(`Record ${id} does not exist in your tenant (deleted? rxs history ${id} tells).`);
      throw error;
    }
    const revisionId = current.context.knowledge_unit_topic_id;
    if (!revisionId) throw new UserError(`Record ${id} names no KT revision: its fields cannot be resolved.`);
    const resolver = await resolverOf(client, revisionId);
    const data = await dataOf(resolver, options, structuredClone(current.data ?? {}));
    const version = options.expectVersion ?? current.version;
    try {
      const changed = await client.records.updateRecord(
        id,
        {
          data,
          version,
          ...(options.name !== undefined && { name: options.name }),
          ...(options.reason !== undefined && { change_reason: options.reason }),
        },
        // Its retries are safe; a run of its own reads the record again, so it is another request.
        { idempotencyKey: randomUUID() },
      );
      printRecord(changed, options.json);
    } catch (error) {
      if (error instanceof ConflictError)
        throw new UserError(
          `Record ${id} is no longer at version ${version}: someone changed it meanwhile (or its topic is read-only). Nothing was written. See what changed with rxs history ${id}, then run the command again.`,
        );
      throw error;
    }
  });

  return command.addCommand(create).addCommand(update);
}

async function resolverOf(client: RxsClient, revisionId: string): Promise<FieldResolver> {
  try {
    const topic = await client.techdoc.getTopic(revisionId);
    return new FieldResolver(buildFieldMap(topic.knowledge_topic_schema).fields);
  } catch (error) {
    if (error instanceof NotFoundError)
      throw new UserError(`No KT revision ${revisionId} in your tenant. Find the ids with: rxs kt list`);
    throw error;
  }
}

/** `data` with the data file's and the --set values put in by form key (--set last). */
async function dataOf(
  resolver: FieldResolver,
  options: RecordWriteOptions,
  data: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  try {
    if (options.dataFile !== undefined) {
      const given = await readDataFile(options.dataFile);
      for (const [name, value] of Object.entries(given))
        setFieldValue(data, resolver.resolve(name).key, value);
    }
    for (const assignment of options.set) {
      const at = assignment.indexOf('=');
      if (at <= 0)
        throw new UserError(`--set "${assignment}" is not NAME=VALUE, e.g. --set "Priority=high".`);
      const field = resolver.resolve(assignment.slice(0, at).trim());
      setFieldValue(data, field.key, convertValue(field, assignment.slice(at + 1)));
    }
  } catch (error) {
    if (error instanceof FieldNameError || error instanceof FieldValueError)
      throw new UserError(`${error.message} Nothing was written.`);
    throw error;
  }
  return data;
}

async function readDataFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(`Cannot read --data-file ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UserError(`--data-file ${file} is not JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UserError(`--data-file ${file} must hold one JSON object ({"Field name": value, ...}).`);
  return value as Record<string, unknown>;
}

function printRecord(record: ServiceRecord, json: boolean | undefined): void {
  process.stdout.write(json ? `${JSON.stringify(record, null, 2)}\n` : `${record._id}\n`);
}
