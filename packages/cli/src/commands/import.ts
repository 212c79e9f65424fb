import { Command, Option } from 'commander';
import type { RelationType } from '@rxs/contract';
import { isObjectId, RELATION_TYPES } from '@rxs/contract/plain';
import { loadMappingFile, MappingFileError } from '@rxs/exchange/export';
import {
  IMPORT_FORMATS,
  ImportFileError,
  importFormatOf,
  importRecords,
  openRowSource,
  type ImportFormat,
  type ImportReport,
} from '@rxs/exchange/import';
import type { OutlineImportReport, RelationImportReport } from '@rxs/exchange';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';
import { Progress } from '../progress.js';
import { importInput } from './import-input.js';
import { positiveInteger } from './whole-numbers.js';

interface ImportCommandOptions extends ConnectionOptions {
  kt?: string;
  type: string[];
  relation: string[];
  format?: ImportFormat;
  dryRun?: boolean;
  continueOnError?: boolean;
  newRecords?: boolean;
  ignoreVersions?: boolean;
  ignoreUnknownColumns?: boolean;
  recreateDeleted?: boolean;
  key?: string;
  removeMissing?: boolean;
  rename: string[];
  sheet?: string;
  specType?: string;
  entry?: string;
  mapping?: string;
  reason?: string;
  concurrency?: string;
  json?: boolean;
  quiet?: boolean;
  timeout: string;
  retries: string;
}

const append = (value: string, previous: string[]) => [...previous, value];

/** `rxs import`: records from a file into a topic, checked against its form before anything is written. */
export function importCommand(): Command {
  const command = new Command('import')
    .description(
      'Import records from CSV, XLSX, JSON, JSON Lines or ReqIF (.reqif, .reqifz) into a topic: create, update, or leave unchanged',
    )
    .argument('<file>', 'the file to import; - for standard input (with --format)')
    .option('--kt <revision-id>', "the topic's current KT revision (rxs kt list)")
    .option(
      '--type <name=revision-id>',
      'ReqIF: import the SPEC-OBJECT-TYPE of that LONG-NAME into the topic of that current KT revision, instead of --kt and --spec-type (repeat for each type; the relations between them become traces)',
      append,
      [],
    )
    .option(
      '--relation <name=relation-type>',
      `ReqIF: the trace relation type of a SPEC-RELATION-TYPE, by its LONG-NAME (repeat; default: the type's name when it is one of ${RELATION_TYPES.slice(0, 3).join(', ')}, …, else is_related)`,
      append,
      [],
    )
    .addOption(
      new Option('--format <format>', 'the file format (default: from its extension)').choices([
        ...IMPORT_FORMATS,
      ]),
    )
    .option('--dry-run', 'check every row and say what would happen; write nothing')
    .option(
      '--continue-on-error',
      'write the valid rows even when some are rejected (default: all or nothing)',
    )
    .option('--new-records', 'copy the rows in as new records: ignore their _id and the topic they came from')
    .option('--ignore-versions', 'update records even when they changed since the file was written')
    .option('--ignore-unknown-columns', 'leave out columns that name no field instead of stopping')
    .option(
      '--recreate-deleted',
      'create anew the rows an earlier import created whose records were deleted since (default: report them)',
    )
    .option(
      '--key <column>',
      "the column (ReqIF: attribute) that holds each row's identity in its source, kept as the record's source id (default: a source_id column; ReqIF: the IDENTIFIER)",
    )
    .option(
      '--remove-missing',
      'delete the records whose source id the file no longer has, once every row is written (default: report them)',
    )
    .option(
      '--rename <column=field>',
      "read a column as a field: 'Object Text=Description' ('Column=' leaves it out; repeat)",
      append,
      [],
    )
    .option(
      '--sheet <name>',
      "XLSX: the sheet to import (default: the topic's sheet of an export, else the only one)",
    )
    .option(
      '--spec-type <name>',
      "ReqIF: the SPEC-OBJECT-TYPE to import (default: the only one, else the topic's)",
    )
    .option(
      '--entry <name>',
      'ReqIF archive (.reqifz): the .reqif file in it to import (default: its only one)',
    )
    .option(
      '--mapping <file>',
      "a mapping file: the topic's identifier rule and ReqIF type name, as for rxs export",
    )
    .option('--reason <text>', "why, kept in each written record's history")
    .option('--concurrency <n>', 'writes in flight at once (default: 2 batches, or 4 single writes)')
    .option('--json', 'print the report as JSON on standard output')
    .option('--quiet', 'no progress line')
    .option('--timeout <ms>', 'per-request timeout', '30000')
    .option('--retries <n>', 'retries of failed requests (writes carry idempotency keys)', '4')
    .addHelpText(
      'after',
      `
Columns are named as exports name them: the semantic name of a field (rxs kt show ID lists them)
or its form key; _id, readable_id, name, version and topic_revision_id are the record's own. A row
updates the record of its _id, else the record with its readable id (by the topic's identifier
rule, e.g. REQ_001 at the start of the name or title), else it is created; a row equal to its
record leaves it unchanged. An empty cell clears the field; a column the file lacks is left as is.

Every row is checked against the topic's form before anything is written: if one is rejected,
nothing is written (all or nothing), unless --continue-on-error. Each write carries an
idempotency key made from the row, so running the same import again never creates twice.

Each row's identity in its source (the --key column, else a source_id column; ReqIF: the spec
object's IDENTIFIER) is kept with the record it creates (context.global_element_id). Importing a
newer file from the same source updates the records whose rows changed, leaves the others as they
are, and reports the records whose source ids the file no longer has; --remove-missing deletes
them once every row is written. A source id twice in the file is refused.

A row that an earlier import (within 24 hours) created, and whose record someone deleted since, is
not created again: it is reported, since the deletion may have been deliberate. Restore the record
to bring it back with its history, or import with --recreate-deleted to create it anew (a new
record, which importing again with --recreate-deleted leaves as it is).

ReqIF: after the spec objects are imported, the SPEC-RELATIONs between imported records become
traces (found by the spec objects' IDENTIFIERs), each once: a trace that exists already (same
source, target and relation type) is left as it is, and a relation whose end was not imported (a
type not chosen, an object the file lacks) is noted, not an error.

Exit code: 0 when every row is in the topic as the file has it (or would be, with --dry-run);
1 when rows were rejected or not written (a record deleted since), or the file cannot be imported.

Examples:
  rxs import --profile prod --kt REVISION_ID requirements.csv --dry-run
  rxs import --profile prod --kt REVISION_ID export.xlsx --sheet "System Requirements"
  rxs import --profile prod --kt NEW_TOPIC_REV old-topic.reqif --new-records
  rxs import --profile prod --kt REVISION_ID doors.reqif --rename "ReqIF.Text=Description"
  rxs import --profile prod --kt REVISION_ID module.reqifz --entry module.reqif
  rxs import --profile prod --kt REVISION_ID doors-v2.reqif --remove-missing --dry-run
  rxs import --profile prod --kt REVISION_ID jira.csv --key "Issue key"
  rxs import --profile prod module.reqif --type "Software Requirement=REV_1" --type "Test Case=REV_2" \
      --relation "Verifies=contributes_to"`,
    );
  addConnectionOptions(command);
  return command.action(async (file: string, options: ImportCommandOptions) => {
    const targets = importTargets(options);
    if (options.key !== undefined && options.key.trim() === '')
      throw new UserError("--key names no column: give the column that holds each row's source id.");
    const renames = pairsOf(options.rename, '--rename', 'COLUMN=FIELD', 'Object Text=Description');
    const relationTypes = relationTypesOf(options.relation);
    const connection = resolveConnection(options);
    const progress = new Progress({ quiet: options.quiet });
    const client = clientFor(connection, {
      timeoutMs: positiveInteger(options.timeout, '--timeout', 1),
      retries: positiveInteger(options.retries, '--retries'),
      onRetry: (message) => progress.update(message, true),
    });
    const reports: ImportReport[] = [];
    let relations: RelationImportReport | undefined;
    let outline: OutlineImportReport | undefined;
    const input = await importInput(file, options.format);
    try {
      const mapping = options.mapping === undefined ? undefined : await loadMappingFile(options.mapping);
      for (const { revisionId, specType } of targets) {
        const source = openRowSource(input.path, {
          format: options.format,
          sheet: options.sheet,
          specType,
          entry: options.entry,
        });
        const report = await importRecords(client, source, {
          revisionId,
          dryRun: options.dryRun,
          continueOnError: options.continueOnError,
          newRecords: options.newRecords,
          ignoreVersions: options.ignoreVersions,
          ignoreUnknownColumns: options.ignoreUnknownColumns,
          recreateDeleted: options.recreateDeleted,
          removeMissing: options.removeMissing,
          ...(options.key !== undefined && { keyColumn: options.key }),
          renames,
          ...(mapping && { mapping }),
          ...(options.reason !== undefined && { reason: options.reason }),
          ...(options.concurrency !== undefined && {
            concurrency: positiveInteger(options.concurrency, '--concurrency', 1),
          }),
          onProgress: ({ phase, rows, total }) => progress.rows(phase, rows, total),
        });
        reports.push(report);
        // The next type is imported only when this one is in its topic (all or nothing per type).
        if (!report.complete) break;
      }
      const format = options.format ?? importFormatOf(input.path);
      // The relations and the outline join the records in the topics: those the import put or found there.
      if (
        format === 'reqif' &&
        reports.length === targets.length &&
        reports.every((report) => report.complete || report.wrote)
      ) {
        const revisionIds = targets.map((target) => target.revisionId);
        // The ReqIF links load only for ReqIF files: their relation types load the contract's schemas.
        const { importReqifLinks } = await import('@rxs/exchange');
        ({ relations, outline } = await importReqifLinks(client, input.path, {
          revisionIds,
          relationTypes,
          dryRun: options.dryRun,
          entry: options.entry,
        }));
      }
    } catch (error) {
      if (error instanceof ImportFileError || error instanceof MappingFileError)
        throw new UserError(
          `${input.named(error.message)} ${reports.length === 0 ? 'Nothing was written.' : 'The spec object types before were imported; import the file again once it is fixed.'}`,
        );
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new UserError(`Cannot read ${file}: no such file.`);
      throw error;
    } finally {
      progress.done();
      await input.remove();
    }
    if (options.json) {
      // One type: its report as before, with the relations; several: each type's report.
      const json =
        targets.length === 1
          ? { ...reports[0], ...(relations && { relations }), ...(outline && { outline }) }
          : { imports: reports, ...(relations && { relations }), ...(outline && { outline }) };
      process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    } else {
      for (const report of reports) process.stdout.write(describeReport(report, input.name));
      if (relations) process.stdout.write(describeRelations(relations, options.dryRun === true));
      if (outline) process.stdout.write(describeOutline(outline, options.dryRun === true));
    }
    if (reports.length < targets.length || reports.some((report) => !report.complete)) process.exitCode = 1;
  });
}

/** The topics to import into: --kt (and --spec-type), or each --type NAME=REVISION. */
function importTargets(options: ImportCommandOptions): { revisionId: string; specType?: string }[] {
  const checkRevision = (revisionId: string, option: string) => {
    if (!isObjectId(revisionId))
      throw new UserError(
        `${option} "${revisionId}" is not a revision id (24 hexadecimal characters): see rxs kt list.`,
      );
  };
  if (options.type.length === 0) {
    if (options.kt === undefined)
      throw new UserError(
        "Say the topic to import into: --kt REVISION_ID (ReqIF: or --type 'Type name=REVISION_ID').",
      );
    checkRevision(options.kt, '--kt');
    return [{ revisionId: options.kt, specType: options.specType }];
  }
  if (options.kt !== undefined || options.specType !== undefined)
    throw new UserError(
      '--type names the spec object types and their topics: give it without --kt and --spec-type.',
    );
  const targets = [
    ...pairsOf(options.type, '--type', 'TYPE=REVISION_ID', 'Software Requirement=REVISION_ID'),
  ].map(([specType, revisionId]) => {
    checkRevision(revisionId, `--type "${specType}=`);
    return { revisionId, specType };
  });
  if (new Set(targets.map((target) => target.revisionId)).size < targets.length)
    throw new UserError(
      '--type names one topic for two spec object types: give each type a topic of its own.',
    );
  return targets;
}

/** NAME=VALUE options as a map (the name trimmed; a name twice keeps the last). */
function pairsOf(
  values: readonly string[],
  option: string,
  shape: string,
  example: string,
): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const value of values) {
    const at = value.indexOf('=');
    if (at <= 0) throw new UserError(`${option} "${value}" is not ${shape}, e.g. ${option} "${example}".`);
    pairs.set(value.slice(0, at).trim(), value.slice(at + 1).trim());
  }
  return pairs;
}

function relationTypesOf(values: readonly string[]): Map<string, RelationType> {
  const types = new Map<string, RelationType>();
  for (const [name, type] of pairsOf(
    values,
    '--relation',
    'RELATION-TYPE-NAME=RELATION_TYPE',
    'Verifies=contributes_to',
  )) {
    if (!(RELATION_TYPES as readonly string[]).includes(type))
      throw new UserError(
        `--relation "${name}=${type}": "${type}" is not a relation type: one of ${RELATION_TYPES.join(', ')}.`,
      );
    types.set(name, type as RelationType);
  }
  return types;
}

/** What became of the file's SPEC-RELATIONs. */
export function describeRelations(report: RelationImportReport, dryRun: boolean): string {
  const lines = [
    `Relations: ${report.relations} SPEC-RELATION${report.relations === 1 ? '' : 's'}: ${report.created} trace${report.created === 1 ? '' : 's'} ${dryRun ? 'would be ' : ''}created, ${report.existing} existing, ${report.skipped} skipped.`,
  ];
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (dryRun && report.skipped > 0)
    lines.push(
      '  (a dry run creates no records: relations to records it would create are counted as skipped)',
    );
  return `${lines.join('\n')}\n`;
}

/** What became of the file's SPEC-HIERARCHYs. */
export function describeOutline(report: OutlineImportReport, dryRun: boolean): string {
  const lines = [
    `Outline: ${report.entries} SPEC-HIERARCHY entr${report.entries === 1 ? 'y' : 'ies'} ${dryRun ? 'would be ' : ''}placed in the document outline, ${report.skipped} skipped.`,
  ];
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (dryRun && report.skipped > 0)
    lines.push(
      '  (a dry run creates no records: entries for records it would create are counted as skipped)',
    );
  return `${lines.join('\n')}\n`;
}

/** The report for a person: what happened, each rejected row with its reasons, and what to do. */
export function describeReport(report: ImportReport, file: string): string {
  const lines: string[] = [];
  const rows = (n: number) => `${n} ${n === 1 ? 'row' : 'rows'}`;
  const would = report.dryRun ? 'would be ' : '';
  lines.push(
    `${report.dryRun ? 'Dry run: import' : 'Import'} of ${file} (${report.format}) into "${report.topic.name}" (revision ${report.topic.revisionId}): ${rows(report.rows)}.`,
  );
  for (const problem of report.problems) lines.push(`  ✗ ${problem}`);
  if (report.problems.length === 0 || report.wrote)
    lines.push(
      `  ${report.created} ${would}created${report.recreated ? ` (${report.recreated} anew, their earlier records deleted since)` : ''}, ${report.updated} ${would}updated, ${report.unchanged} unchanged, ${report.rejected} rejected${report.failed ? `, ${report.failed} refused by the service` : ''}${report.deletedSince ? ` (${report.deletedSince} deleted since an earlier import: not written)` : ''}${report.missing ? `; ${report.missing} no longer in the file${report.removed ? `, ${report.removed} ${would}deleted` : ', kept'}` : ''}.`,
    );
  if (report.dryRun && report.columns.length > 0)
    lines.push(
      `  columns: ${report.columns
        .map((c) =>
          c.field
            ? `${c.column} → ${c.field.name === c.column ? '' : `"${c.field.name}" `}(${c.field.key})`
            : `${c.column} → ${c.as === 'data-key' ? 'data key' : c.as === 'ignored' ? 'left out' : 'no field'}`,
        )
        .join(', ')}`,
    );
  for (const row of report.rowProblems) {
    const who = [row.readableId, row.recordId].filter(Boolean).join(', ');
    lines.push(
      `  ${row.where}${who ? ` (${who})` : ''}${row.phase === 'write' ? ', refused by the service' : ''}:`,
    );
    for (const problem of row.problems) lines.push(`    - ${problem}`);
  }
  if (report.unlisted > 0)
    lines.push(`  ... and ${rows(report.unlisted)} more with problems (--json lists the first 1000 too).`);
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (report.problems.length > 0 && !report.wrote)
    lines.push('Nothing was written. Fix the file and import it again.');
  else if (report.rejected > 0 && report.allOrNothing && !report.dryRun)
    lines.push(
      `Nothing was written: ${rows(report.rejected)} rejected (all or nothing; otherwise ${report.planned.created} would be created and ${report.planned.updated} updated). Fix them and import again, or write the valid rows with --continue-on-error.`,
    );
  else if (report.rejected > 0 && report.dryRun)
    lines.push(`Fix the rejected rows before importing (or import the others with --continue-on-error).`);
  else if (report.rejected > 0 || report.failed > report.deletedSince)
    lines.push(
      `The other rows were written. Fix the rows above and import the file again: rows already in the topic are left unchanged.`,
    );
  if (report.deletedSince > 0) {
    const one = report.deletedSince === 1;
    lines.push(
      `${rows(report.deletedSince)} ${one ? 'was' : 'were'} imported before, and ${one ? 'its record was' : 'their records were'} deleted since: not written again. Restore ${one ? 'the record' : 'the records'} to bring ${one ? 'it' : 'them'} back with ${one ? 'its' : 'their'} history (web app: the record's page), or import again with --recreate-deleted to create ${one ? 'it' : 'them'} anew.`,
    );
  }
  return `${lines.join('\n')}\n`;
}
