import { Command, Option } from 'commander';
import {
  DEFAULT_MAX_EXPORT_COLUMNS,
  EXPORT_FORMATS,
  LINKS_BY,
  sphinxDocnameMistake,
  type ExportFormat,
  type LinksBy,
} from '@rxs/exchange/export';
import type { DocumentFormat } from '@rxs/exchange';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';
import { documentChanges } from '../document-changes.js';
import {
  describeSummary,
  DOCUMENT_FORMATS,
  isDocumentFormat,
  runExport,
  type ExportRunOptions,
} from '../export-run.js';
import { Progress } from '../progress.js';
import { positiveInteger } from './whole-numbers.js';

export interface ExportCommandOptions extends ConnectionOptions {
  kt?: string[];
  asOf?: string;
  baseline?: string;
  /** A document format (docx, pdf) only with `rxs export`. */
  format: ExportFormat | DocumentFormat;
  out?: string;
  traces?: boolean;
  labels?: boolean;
  followLatest?: boolean;
  json?: boolean;
  quiet?: boolean;
  timeout?: string;
  retries?: string;
  traceConcurrency?: string;
  mapping?: string;
  maxColumns?: string;
  /** `rxs export` only: rxs sync's probe does not tell outputs apart by it. */
  needsDocname?: string;
  /** `rxs export` only: how links are named (default `role` where the tenant has a trace model). */
  linksBy?: LinksBy;
}

export const collect = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
];

export { positiveInteger };

/** What the shared export options ask for, checked. */
export function exportRunOptions(options: ExportCommandOptions, out: string | undefined): ExportRunOptions {
  return {
    revisionIds: options.kt ?? [],
    format: options.format,
    ...(options.asOf !== undefined && { asOf: options.asOf }),
    ...(options.baseline !== undefined && { baseline: options.baseline }),
    out,
    traces: !!options.traces,
    labels: !!options.labels,
    followLatest: !!options.followLatest,
    timeoutMs: positiveInteger(options.timeout, '--timeout', 1),
    retries: positiveInteger(options.retries, '--retries'),
    traceConcurrency: positiveInteger(options.traceConcurrency, '--trace-concurrency', 1),
    ...(options.mapping !== undefined && { mapping: options.mapping }),
    maxColumns: positiveInteger(options.maxColumns, '--max-columns', 1),
    ...(options.needsDocname !== undefined && {
      needs: { docname: checkedNeedsDocname(options.needsDocname, options.format) },
    }),
    ...(options.linksBy !== undefined && { linksBy: options.linksBy }),
    // A document compares itself with the previous released baseline.
    ...(isDocumentFormat(options.format) && { documentChanges }),
  };
}

/** `--needs-docname`, checked: an option of the needs format, a Sphinx document name a link can carry. */
function checkedNeedsDocname(docname: string, format: ExportFormat | DocumentFormat): string {
  if (format !== 'needs') throw new UserError(`--needs-docname goes with --format needs, not ${format}.`);
  const mistake = sphinxDocnameMistake(docname);
  if (mistake) throw new UserError(`--needs-docname: ${mistake}`);
  return docname;
}

/** Options shared by export and sync: what to export and how (`formats`: the --format choices). */
export function addExportOptions(
  command: Command,
  outDescription: string,
  formats: readonly string[] = EXPORT_FORMATS,
): Command {
  return addConnectionOptions(
    command
      .option(
        '--kt <revision-id>',
        'KT revision id to export (repeat, or comma separate, for several topics); required unless --baseline names them',
        collect,
      )
      .option(
        '--as-of <time>',
        'the state at this past moment (ISO 8601, e.g. 2026-11-01T12:00:00Z): equals, byte for byte, the export taken then',
      )
      .option(
        '--baseline <name>',
        'a baseline (name or id): its moment, and its topics unless --kt names some (rxs baseline list)',
      )
      .addOption(new Option('--format <format>', 'output format').choices([...formats]).default('json'))
      .option('--out <file>', outDescription)
      .option('--traces', 'also retrieve the traces between the records (step 4)')
      .option(
        '--mapping <file>',
        'mapping file: need types, id prefixes, ReqIF types, fields, identifier rules and link names per topic (docs/mapping.md; default: the profile\'s "mapping")',
      )
      .option('--labels', 'show select, radio and checklist values by their labels instead of their values')
      .option('--follow-latest', 'when a topic was re-approved, export its new revision instead of failing')
      .option('--json', 'print a machine-readable summary on standard output')
      .option('--quiet', 'no progress line')
      .option('--timeout <ms>', 'per-request timeout (and idle timeout of a streamed listing)', '30000')
      .option('--retries <n>', 'retries of idempotent requests on network errors, 429 and 5xx', '4')
      .option('--trace-concurrency <n>', 'trace batch requests in flight at once', '4')
      .option(
        '--max-columns <n>',
        `most columns one topic may have, keys found only in record data included (default ${DEFAULT_MAX_EXPORT_COLUMNS}); beyond it the export stops before writing`,
      ),
  );
}

export function exportCommand(): Command {
  const command = new Command('export')
    .description(
      'Export the records of knowledge topics: the documented four-step procedure, into a file format',
    )
    .addHelpText(
      'after',
      `
Steps, in the document's order: (1) GET /kt/{revision} for the schema, (2) GET /records/ by the same
revision id, (3) map form keys to semantic names (service-key, label, key), (4) with --traces, POST
/traces/batch/list in bounded, chunked batches. The output file appears only when the export succeeded.

Formats: json (full snapshot), jsonl, csv, xlsx (a sheet per topic), reqif (ReqIF 1.2), reqifz
(a zip holding that ReqIF file as <name>.reqif), needs (Sphinx-Needs needs.json). See docs/formats/.
Documents for people: docx and pdf, of a --baseline (its status and signatures) or of now (--kt;
"NOT RELEASED" on every page): each topic's records with their fields and links, a traceability
matrix and coverage summary per rule (the tenant's trace model, or the mapping file's links), and
a change summary against the previous released baseline (the one a --baseline supersedes when it
was released, else the latest released before its moment; for now, the latest released): records
added, removed and changed, with each changed field's old and new value. That baseline is exported
too, to compare with. They always read the traces and show select values by their labels.

Connection: --url or --techdoc-url/--records-url/--tracer-url, or RXS_TECHDOC_URL, RXS_RECORDS_URL,
RXS_TRACER_URL; the key from --api-key-file, RXS_API_KEY or a profile of the config file.

Examples:
  rxs export --url http://127.0.0.1:8080 --api-key-file rxs-data/demo-owner.key --kt 6b03... --format csv --out reqs.csv
  RXS_API_KEY=... rxs export --profile prod --kt REV1 --kt REV2 --traces --format reqif --out design.reqif
  rxs export --profile prod --kt REV --format json --out - | jq '.topics[0].records | length'
  rxs export --profile prod --kt REQS --kt TESTS --traces --mapping docs/mapping.example.jsonc --format needs
  rxs export --profile prod --baseline v1.0 --traces --format reqif --out v1.0.reqif
  rxs export --profile prod --kt REV --as-of 2026-11-01T12:00:00Z --format csv --out audit.csv
  rxs export --profile prod --baseline v1.0 --format pdf --out v1.0.pdf
  rxs export --profile prod --kt REQS --kt TESTS --format docx --out current.docx

With --as-of or --baseline the export reads what the services held at that moment (records, topic
revisions, traces, approvals), and its header's export time is that moment: re-taking an export with
--as-of set to the exportedAt of an earlier one gives the same bytes (same format, mapping and rxs).`,
    );
  addExportOptions(
    command,
    'output file, or - for standard output (default: rxs-export.<format extension>)',
    [...EXPORT_FORMATS, ...DOCUMENT_FORMATS],
  );
  command.addOption(
    new Option(
      '--links-by <naming>',
      "with --traces: name links by the roles of the tenant's trace model where one matches (role: Sphinx-Needs link types, ReqIF relation types, CSV link columns, a trace's role), or by relation type alone as before trace models (relation-type); the relation type stays in the file either way",
    )
      .choices([...LINKS_BY])
      .default('role'),
  );
  command.option(
    '--needs-docname <name>',
    "needs format: the Sphinx document the needs are shown in (e.g. requirements/system), so that needs_external_needs links to <base_url>/<name>.html#<id>; overrides the mapping file's docname",
  );
  return command.action(async (options: ExportCommandOptions) => {
    const connection = resolveConnection(options);
    if (options.json && options.out === '-')
      throw new UserError('--json prints the summary on standard output; it cannot go with --out -.');
    const out = options.out ?? `rxs-export.${extensionOf(options.format)}`;
    const progress = new Progress({ quiet: options.quiet || options.out === '-' });
    const run = await runExport(connection, exportRunOptions(options, out), progress);
    await run.commit();
    if (options.json) process.stdout.write(`${JSON.stringify(run.summary, null, 2)}\n`);
    else if (out !== '-') process.stderr.write(`${describeSummary(run.summary)}\n`);
  });
}

export function extensionOf(format: ExportFormat | DocumentFormat): string {
  return format === 'needs' ? 'needs.json' : format;
}
