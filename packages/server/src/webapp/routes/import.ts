import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Permission } from '@rxs/contract';
import { buildFieldMap, makeScratchFolder } from '@rxs/exchange/export';
import {
  ImportChoiceError,
  ImportFileError,
  importFormatOf,
  importRecords,
  importReqifLinks,
  openRowSource,
  type ImportClient,
  type ImportReport,
  type OpenSourceOptions,
  type ImportWording,
  type LinkImportClient,
  type OutlineImportReport,
  type RelationImportReport,
} from '@rxs/exchange';
import {
  ImportQuery,
  UPLOAD_FORMATS,
  type ImportChoice,
  type ImportChoiceAnswer,
  type ImportView,
  type UploadFormat,
} from '@rxs/web-api';
import type { Principal } from '../../auth/principal.js';
import { requirePermission } from '../../auth/principal.js';
import { HttpError, unprocessable, validationItem } from '../../http/errors.js';
import type { Services } from '../../services/index.js';
import { signedIn, type WebContext } from '../context.js';
import { ExportSlots, IMPORT_SLOTS } from '../../http/export-slots.js';
import { inProcessImportClient } from '../import-client.js';
import { inProcessExportSource } from './export.js';

/** The largest file the web app takes, in MB, unless RXS_WEB_IMPORT_MB says otherwise. */
export const DEFAULT_IMPORT_MB = 50;
/** Rows of the check shown as a preview. */
export const PREVIEW_ROWS = 20;
/** Content types the upload may be sent with: the browser sends the file's bytes as they are. */
const UPLOAD_TYPES = [
  'application/octet-stream',
  'text/csv',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/xml',
  'text/xml',
  'application/zip',
];

/** The upload's format by its name's extension, as `rxs import` tells it: JSON and JSON Lines are not the page's. */
function uploadFormatOf(name: string): UploadFormat | undefined {
  const format = importFormatOf(name);
  return UPLOAD_FORMATS.find((upload) => upload === format);
}

/** The kind of file an upload must be, by its format and name: a ReqIF archive is a .reqifz. */
type UploadKind = UploadFormat | 'reqifz';
const uploadKindOf = (format: UploadFormat, name: string): UploadKind =>
  format === 'reqif' && extname(name).toLowerCase() === '.reqifz' ? 'reqifz' : format;

/** Each kind in the words of the answer to a file of another. */
const KIND_NAMES: Record<UploadKind, string> = {
  csv: 'a CSV file (text)',
  xlsx: 'an XLSX workbook (a zip archive)',
  reqif: 'a ReqIF file (XML text)',
  reqifz: 'a ReqIF archive (a zip archive of .reqif files)',
};
const ACCEPTED = 'CSV (.csv, .tsv, .txt), XLSX (.xlsx), ReqIF (.reqif, .xml) or a ReqIF archive (.reqifz)';

/** RXS_WEB_IMPORT_MB (a whole number ≥ 1), else the default, in bytes. */
export function importLimitFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.RXS_WEB_IMPORT_MB;
  if (text === undefined || text.trim() === '') return DEFAULT_IMPORT_MB * 1024 * 1024;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1 || !Number.isSafeInteger(value))
    throw new Error(`RXS_WEB_IMPORT_MB must be a whole number ≥ 1 (megabytes), got "${text}".`);
  return value * 1024 * 1024;
}

type ReadLimits = NonNullable<OpenSourceOptions['limits']>;

/**
 * Settings of what reading an upload may cost, beyond the sdk's defaults (DEFAULT_IMPORT_LIMITS):
 * each a whole number ≥ 1, megabytes (MiB) where the name ends in _MB.
 */
const READ_LIMIT_SETTINGS: Record<string, { limit: keyof ReadLimits; unit: number }> = {
  RXS_WEB_IMPORT_COLUMNS: { limit: 'maxColumns', unit: 1 },
  RXS_WEB_IMPORT_CELL_MB: { limit: 'maxCellBytes', unit: 1024 * 1024 },
  RXS_WEB_IMPORT_ROW_MB: { limit: 'maxRowBytes', unit: 1024 * 1024 },
  RXS_WEB_IMPORT_UNZIPPED_MB: { limit: 'maxArchiveBytes', unit: 1024 * 1024 },
  RXS_WEB_IMPORT_SHARED_STRINGS: { limit: 'maxSharedStrings', unit: 1 },
  RXS_WEB_IMPORT_SHARED_STRINGS_MB: { limit: 'maxSharedStringBytes', unit: 1024 * 1024 },
};

/** The read limits the environment sets; a setting that is no whole number ≥ 1 stops the server. */
export function readLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): ReadLimits {
  const limits: ReadLimits = {};
  for (const [name, { limit, unit }] of Object.entries(READ_LIMIT_SETTINGS)) {
    const text = env[name]?.trim();
    if (text === undefined || text === '') continue;
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < 1 || !Number.isSafeInteger(value * unit))
      throw new Error(`${name} must be a whole number ≥ 1${unit > 1 ? ' (megabytes)' : ''}, got "${text}".`);
    limits[limit] = value * unit;
  }
  return limits;
}

/** The setting of a read limit, for the answer of a file past it. */
const settingOf = (limit: string) =>
  Object.entries(READ_LIMIT_SETTINGS).find(([, setting]) => setting.limit === limit)?.[0];

const tooLarge = (limit: number) =>
  new HttpError(
    413,
    `The file is larger than ${limit / 1024 / 1024} MB, the most the web app imports (RXS_WEB_IMPORT_MB). Split it, or import it with rxs import.`,
  );

const notAccepted = (name: string) =>
  new HttpError(
    415,
    `"${name}" is not a file the import page takes: ${ACCEPTED}. Save it as one of them and choose it again; JSON and JSON Lines files import with rxs import.`,
  );

/** What the first bytes of an upload show it is, as far as the page tells kinds apart. */
type Content = 'zip' | 'pdf' | 'xml' | 'other';
const CONTENT_NAMES: Record<Content, string> = {
  zip: 'it is a zip archive',
  pdf: 'it is a PDF document',
  xml: 'it is XML text',
  other: 'it does not start as XML does',
};
/** Bytes of an upload's start that tell its kind: a byte order mark and some white space before an XML tag. */
const HEAD_BYTES = 64;

function contentOf(head: Buffer): Content {
  if (head.length >= 2 && head[0] === 0x50 && head[1] === 0x4b) return 'zip'; // "PK"
  if (head.toString('latin1').startsWith('%PDF')) return 'pdf';
  // UTF-8 or UTF-16 (with or without its byte order mark): the text without its zero bytes.
  const text = Buffer.from(head.filter((byte) => byte !== 0))
    .toString('latin1')
    .replace(/^(\xef\xbb\xbf|\xff\xfe|\xfe\xff)/, '')
    .trimStart();
  // Only white space so far: the reader tells whether XML follows.
  return text === '' || text.startsWith('<') ? 'xml' : 'other';
}

/** Whether a file of `kind` may start as `content` (CSV: any text, so anything but a zip or a PDF). */
const fits = (kind: UploadKind, content: Content) =>
  kind === 'xlsx' || kind === 'reqifz'
    ? content === 'zip'
    : kind === 'reqif'
      ? content === 'xml'
      : content !== 'zip' && content !== 'pdf';

const notItsKind = (name: string, kind: UploadKind, content: Content) =>
  new HttpError(
    415,
    `"${name}" is not ${KIND_NAMES[kind]}, as its name says: ${CONTENT_NAMES[content]}. ` +
      (kind === 'reqif' && content === 'zip'
        ? 'A ReqIF archive is named .reqifz: rename it and choose it again.'
        : `Choose a file of a kind the page takes, named after its kind: ${ACCEPTED}.`),
  );

/** The sdk's advice in this page's words: its column mapping, checkboxes and choices, not rxs import's options. */
const WEB_WORDING: ImportWording = {
  unknownColumn: () => 'Choose its field in the column mapping, or leave it out.',
  mapColumn: () => 'choose its field in the column mapping',
  leftOut: 'left out in the column mapping',
  unknownLeftOut: 'left out in the column mapping',
  newRecords: 'with “Copy in as new records”',
  ignoreVersions: 'with rxs import --ignore-versions',
  removeMissing: 'with “Remove records no longer in the file”',
  chooseSheet: 'Choose the sheet to import and check again.',
  chooseSpecType: 'Choose the spec object type to import and check again.',
  chooseEntry: 'Choose the ReqIF file of the archive to import and check again.',
};

/** Names a 422 offers to choose among; a file may declare thousands, the rest are counted. */
const MAX_CHOICES = 200;

/** The names to choose among that a reader's error lists, as the page offers them. */
function choiceOf({ choice }: ImportChoiceError): ImportChoice {
  return {
    option: choice.option,
    names: choice.names.slice(0, MAX_CHOICES),
    more: Math.max(0, choice.names.length - MAX_CHOICES),
  };
}

/** A file that holds several of what one import takes: answered with the names to choose among. */
class ChoiceNeeded extends HttpError {
  constructor(
    message: string,
    readonly choice: ImportChoice,
  ) {
    super(422, message);
  }

  get answer(): ImportChoiceAnswer {
    return { detail: this.message, choose: this.choice };
  }
}

/**
 * The calls that make a ReqIF file's SPEC-RELATIONs traces, answered in-process with the user's
 * principal: the import's record listing, and the tracer's (a batch past the edge limit is asked
 * again in halves, as the export's listing does).
 */
function inProcessLinkClient(
  services: Services,
  principal: Principal,
  imports: ImportClient,
): LinkImportClient {
  const traces = inProcessExportSource(services, principal, '');
  return {
    techdoc: imports.techdoc,
    records: {
      listRecords: (query, options) => imports.records.listRecords(query, options),
      getOutline: (historyId) => services.outlines.get(principal, historyId),
      putOutline: (historyId, entries) =>
        services.outlines.replace(principal, historyId, { entries: [...entries] }),
    },
    tracer: {
      createTrace: (body) => services.tracer.create(principal, body),
      async listTracesFor(nodes, options = {}) {
        const edges = await traces.listTraces([...nodes]);
        if (options.onEdges) {
          options.onEdges(edges, 0);
          return { results: {}, edges: [] };
        }
        return { results: {}, edges };
      },
    },
  };
}

/** The report naming the file as the user named it, not by its temporary copy. */
function namingTheUpload(report: ImportReport, named: (text: string) => string): ImportReport {
  const all = (list: string[]) => list.map(named);
  return {
    ...report,
    problems: all(report.problems),
    notes: all(report.notes),
    preview: report.preview.map((row) => ({ ...row, problems: all(row.problems) })),
    rowProblems: report.rowProblems.map((row) => ({ ...row, problems: all(row.problems) })),
  };
}

/** `renames` as a map, or a 422 saying what it should be. */
function renamesOf(text: string | undefined): Map<string, string> {
  const renames = new Map<string, string>();
  if (text === undefined || text.trim() === '') return renames;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw unprocessable([
      validationItem(
        ['query', 'renames'],
        'A JSON object: file column → field (or "" to leave it out)',
        'value_error',
      ),
    ]);
  for (const [column, field] of Object.entries(parsed)) {
    if (typeof field !== 'string')
      throw unprocessable([
        validationItem(
          ['query', 'renames', column],
          'A field name, or "" to leave the column out',
          'value_error',
        ),
      ]);
    renames.set(column, field.trim());
  }
  return renames;
}

/**
 * The request body, streamed to a file in a folder of its own: refused with 413 past `limit`
 * bytes, and with 415 when its first bytes show another kind of file than its name says.
 */
async function saveUpload(
  request: FastifyRequest,
  file: string,
  kind: UploadKind,
  name: string,
  limit: number,
) {
  let size = 0;
  /** The first bytes, held back until they tell the file's kind (or the file ends before). */
  let head: Buffer[] | undefined = [];
  const judged = (): Buffer | Error => {
    const bytes = Buffer.concat(head!);
    head = undefined;
    const content = contentOf(bytes);
    return fits(kind, content) ? bytes : notItsKind(name, kind, content);
  };
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > limit) return done(tooLarge(limit));
      if (head === undefined) return done(null, chunk);
      head.push(chunk);
      if (size < HEAD_BYTES) return done();
      const bytes = judged();
      return bytes instanceof Error ? done(bytes) : done(null, bytes);
    },
    flush(done) {
      if (head === undefined || size === 0) return done();
      const bytes = judged();
      return bytes instanceof Error ? done(bytes) : done(null, bytes);
    },
  });
  await pipeline(request.body as Readable, guard, createWriteStream(file));
  return size;
}

/**
 * The import page: `POST /api/import/check` and `POST /api/import` take a CSV, XLSX, ReqIF or
 * ReqIF archive file as the request body (its name and the options in the query) for a topic's
 * current revision. The check is a dry run that answers the column mapping, the first rows as
 * checked and the counts; the import writes (all or nothing unless `continue_on_error`), each row
 * with the idempotency key `rxs import` gives it, and then, as `rxs import` does, a ReqIF file's
 * SPEC-RELATIONs between the topic's records as traces. A file that holds several sheets, spec
 * object types or .reqif files without saying which is answered 422 with the names to choose among.
 * The file is streamed to a temporary folder and deleted when the answer is ready, so no upload
 * outlives its request or is seen by another; the page sends it again to import.
 */
export function importRoutes(context: WebContext): FastifyPluginAsync {
  const { services, importMaxBytes: limit } = context;
  const slots = ExportSlots.fromEnv(process.env, IMPORT_SLOTS);
  const readLimits = readLimitsFromEnv();
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    // The body stays a stream: the route writes it to disk as it arrives.
    app.addContentTypeParser(UPLOAD_TYPES, (_request, payload, done) => done(null, payload));
    // An answer before the whole file arrived (too large, another type): the rest is not read, so
    // the connection closes instead of waiting for it.
    app.addHook('onSend', async (request, reply) => {
      if (!request.raw.complete) void reply.header('connection', 'close');
    });
    const config = { permission: ['kt:read', 'records:read', 'records:write'] satisfies Permission[] };
    const options = {
      config,
      schema: { querystring: ImportQuery },
      // Before a byte of the body is read: a declared size past the limit.
      onRequest: async (request: FastifyRequest) => {
        if (Number(request.headers['content-length']) > limit) throw tooLarge(limit);
      },
    };

    const run = async (request: FastifyRequest, query: ImportQuery, dryRun: boolean): Promise<ImportView> => {
      const { principal } = signedIn(request);
      const format = query.format ?? uploadFormatOf(query.name);
      if (format === undefined) throw notAccepted(query.name);
      // A ReqIF file's relations become traces: importing one writes traces as well as records.
      if (format === 'reqif') requirePermission(principal, 'traces:write');
      const renames = renamesOf(query.renames);
      // Another tenant's revision, or none: 404 before the file is read.
      const topic = await services.techdoc.getRevision(principal, query.revision);
      if (topic.latest_revision_id && topic.latest_revision_id !== topic._id)
        throw new HttpError(
          409,
          `"${topic.knowledge_topic_name}" was re-approved: its records are under revision ${topic.latest_revision_id} now. Open its records again and import there.`,
        );
      if (request.body === undefined || request.body === null)
        throw new HttpError(422, 'No file was sent. Choose a file and check it again.');
      if (!(request.body instanceof Readable))
        throw new HttpError(
          415,
          `The file is sent as its bytes, with Content-Type ${UPLOAD_TYPES.join(', ')}; not as ${request.headers['content-type']}.`,
        );
      const entry = query.entry?.trim() || undefined;
      // A server killed during an upload leaves its folder to the next upload, which removes it.
      const dir = await makeScratchFolder('rxs-web-import');
      const file = join(dir, `upload.${format}`);
      const named = (text: string) => text.split(file).join(`"${query.name}"`);
      let report: ImportReport | undefined;
      try {
        const size = await saveUpload(request, file, uploadKindOf(format, query.name), query.name, limit);
        if (size === 0)
          throw new HttpError(
            422,
            `"${query.name}" is empty. Choose a file that holds the records to import.`,
          );
        // The file is here: a slot for reading and writing it (not for a slow upload).
        const release = slots.take(ExportSlots.userOf(principal));
        let relations: RelationImportReport | undefined;
        let outline: OutlineImportReport | undefined;
        try {
          const client = inProcessImportClient(services, principal);
          report = await importRecords(
            client,
            openRowSource(file, {
              format,
              wording: WEB_WORDING,
              limits: readLimits,
              ...(query.sheet?.trim() && { sheet: query.sheet.trim() }),
              ...(query.spec_type?.trim() && { specType: query.spec_type.trim() }),
              ...(entry && { entry }),
            }),
            {
              revisionId: topic._id,
              scratchDir: dir,
              dryRun,
              continueOnError: query.continue_on_error,
              newRecords: query.new_records,
              removeMissing: query.remove_missing,
              ...(query.key_column !== undefined && { keyColumn: query.key_column }),
              renames,
              previewRows: PREVIEW_ROWS,
              wording: WEB_WORDING,
              ...(query.reason?.trim() && { reason: query.reason.trim() }),
            },
          );
          // As rxs import: once the spec objects are in the topic (or, in a check, would be).
          if (format === 'reqif' && (report.complete || report.wrote)) {
            const reading = {
              revisionIds: [topic._id],
              dryRun,
              entry,
              wording: WEB_WORDING,
              limits: readLimits,
            };
            ({ relations, outline } = await importReqifLinks(
              inProcessLinkClient(services, principal, client),
              file,
              reading,
            ));
          }
        } finally {
          release();
        }
        const fields = buildFieldMap(topic.knowledge_topic_schema).fields.map(({ name, key }) => ({
          name,
          key,
        }));
        return {
          file: { name: query.name, size, format },
          fields,
          report: namingTheUpload(report, named),
          ...(relations && { relations: { ...relations, notes: relations.notes.map(named) } }),
          ...(outline && { outline: { ...outline, notes: outline.notes.map(named) } }),
        };
      } catch (error) {
        // A file that cannot be read as its format says why, with 422 whatever limit of the reading
        // it went past (what it unpacks to, declares or holds): the upload itself was within its
        // limit, which alone is 413 (saveUpload).
        if (error instanceof ImportFileError) {
          const setting = error.exceeded && settingOf(error.exceeded.limit);
          const message = `${named(error.message)} ${
            report?.wrote
              ? 'The records were imported, their relations not: import the file again once it is fixed to make them traces.'
              : 'Nothing was written.'
          }${setting ? ` (This server's limit is set by ${setting}.)` : ''}`;
          if (error instanceof ImportChoiceError) throw new ChoiceNeeded(message, choiceOf(error));
          throw new HttpError(422, message);
        }
        throw error;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };

    /** The view, or for a file that holds several of what one import takes, the names to choose among. */
    const answer = async (
      request: FastifyRequest,
      reply: FastifyReply,
      query: ImportQuery,
      dryRun: boolean,
    ) => {
      try {
        return await run(request, query, dryRun);
      } catch (error) {
        if (!(error instanceof ChoiceNeeded)) throw error;
        return reply.code(422).send(error.answer);
      }
    };

    app.post('/import/check', options, (request, reply) => answer(request, reply, request.query, true));
    app.post('/import', options, (request, reply) => answer(request, reply, request.query, false));
  };
}
