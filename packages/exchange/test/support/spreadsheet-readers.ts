import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KnowledgeTopicRevision } from '../../../contract/src/knowledge-topic.js';
import type { ServiceRecord } from '../../../contract/src/record.js';
import type { ExportFormat, ExportPart } from '../../src/export/model.js';
import { exportParts, type ExportOptions, type ExportSource } from '../../src/export/procedure.js';
import { createWriter, writeExport } from '../../src/export/writers/index.js';
import { hostileRevisionIds, hostileSource, referenceSample } from './hostile-corpus.js';

/**
 * The real programs that read CSV and XLSX files (Python's csv module, LibreOffice headless), and
 * an export written once as parts so that each format and the JSON export carry the same data.
 */

export const PYTHON = '/usr/bin/python3';

/** Whether a program runs; a missing one is named with the Debian package that installs it. */
export function missingReader(program: string, debianPackage: string): string | undefined {
  const run = spawnSync(program, ['--version'], { encoding: 'utf8' });
  return run.status === 0
    ? undefined
    : `${program} is not installed: install the Debian package ${debianPackage} (apt-get install ${debianPackage}), as .ci/run does.`;
}

/** Skip locally when a reader is missing, but never in CI: there its absence is a failure. */
export function shouldSkip(missing: string | undefined): boolean {
  return missing !== undefined && process.env.CI !== 'true';
}

export function scratchDir(): { path: string; dispose: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'rxs-readers-'));
  return { path, dispose: () => rmSync(path, { recursive: true, force: true }) };
}

export async function collectParts(
  source: ExportSource,
  revisionIds: string[],
  options: Pick<ExportOptions, 'maxColumns'> = {},
): Promise<ExportPart[]> {
  const parts: ExportPart[] = [];
  for await (const part of exportParts(source, {
    ...options,
    revisionIds,
    traces: true,
    now: () => new Date('2026-08-11T09:30:00.000Z'),
  }))
    parts.push(part);
  return parts;
}

/** Writes the parts in a format to a file; returns the writer's own warnings. */
export async function writeFile(
  format: ExportFormat,
  parts: readonly ExportPart[],
  file: string,
): Promise<readonly string[]> {
  const writer = createWriter(format, createWriteStream(file));
  await writeExport(writer, parts);
  return writer.warnings ?? [];
}

/** What the JSON export carries, parsed as a JSON reader would. */
export interface JsonExport {
  topics: {
    name: string;
    fields: { name: string }[];
    records: {
      id: string;
      readableId: string;
      name: string;
      version: string;
      topicRevisionId: string;
      sourceId?: string;
      values: Record<string, unknown>;
    }[];
  }[];
  traces: {
    id: string;
    relationTypes: string[];
    source: { id: string; readableId?: string; type: string };
    target: { id: string; readableId?: string; type: string };
    suspect: boolean;
  }[];
}

export async function jsonExport(parts: readonly ExportPart[], dir: string): Promise<JsonExport> {
  const file = join(dir, 'export.json');
  await writeFile('json', parts, file);
  return JSON.parse(readFileSync(file, 'utf8')) as JsonExport;
}

/** Rows of a CSV file as Python's csv module reads it (UTF-8 with BOM, `newline=''`). */
export function pythonCsvRows(file: string): string[][] {
  const script = [
    'import csv, json, sys',
    "with open(sys.argv[1], newline='', encoding='utf-8-sig') as f:",
    '    rows = list(csv.reader(f))',
    'sys.stdout.write(json.dumps(rows))',
  ].join('\n');
  return JSON.parse(execFileSync(PYTHON, ['-c', script, file], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

/**
 * Converts a file with LibreOffice headless into CSV files, one per sheet (`<base>-<sheet>.csv`),
 * every cell exported as text in UTF-8 and quoted, and returns them by sheet name. `inputFilter`
 * is LibreOffice's import filter option string, for a CSV input.
 */
export function libreOfficeSheets(file: string, outDir: string, inputFilter?: string): Map<string, string> {
  const profile = mkdtempSync(join(tmpdir(), 'rxs-lo-profile-'));
  try {
    const args = [
      `-env:UserInstallation=file://${profile}`,
      '--headless',
      ...(inputFilter ? [`--infilter=${inputFilter}`] : []),
      '--convert-to',
      // 44 comma, 34 quote, 76 UTF-8, line 1, quote all text, cells as stored, no formulas, all sheets.
      'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,true,false,false,false,false,-1',
      '--outdir',
      outDir,
      file,
    ];
    const run = spawnSync('soffice', args, { encoding: 'utf8', timeout: 120_000 });
    if (run.status !== 0) throw new Error(`soffice failed (${run.status}): ${run.stderr}`);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
  const base = file.replace(/^.*\//, '').replace(/\.[^.]+$/, '');
  const sheets = new Map<string, string>();
  for (const name of readdirSync(outDir)) {
    if (!name.startsWith(base) || !name.endsWith('.csv')) continue;
    const path = join(outDir, name);
    if (path === file) continue;
    const sheet = name === `${base}.csv` ? '' : name.slice(base.length + 1, -'.csv'.length);
    sheets.set(sheet, path);
  }
  if (sheets.size === 0) throw new Error(`LibreOffice wrote no CSV for ${file} into ${outDir}.`);
  return sheets;
}

/** The reference sample topic and its records as an export source, with traces from the first record. */
export function referenceSource(): { source: ExportSource; revisionIds: string[] } {
  const topic = referenceSample<KnowledgeTopicRevision>('kt_system_requirements.json');
  const records = referenceSample<ServiceRecord[]>('records_system_requirements.json');
  const [first, ...rest] = records;
  const traces = rest.slice(0, 2).map((target, i) => ({
    _id: `7f${i.toString(16).padStart(22, '0')}`,
    source: first!._id,
    target: target._id,
    relation_type: ['relates_to'],
    source_node: { id: first!._id, type: 'Record' },
    target_node: { id: target._id, type: 'Record' },
    // The second link is suspect: a record changed since it was reviewed.
    outdated: i === 1,
  }));
  return {
    revisionIds: [topic._id],
    source: {
      servers: {
        techdoc: 'http://techdoc.test',
        records: 'http://records.test',
        tracer: 'http://tracer.test',
      },
      async getTopic() {
        return structuredClone(topic);
      },
      async *listRecords() {
        for (const record of records) yield structuredClone(record);
      },
      async listTraces() {
        return structuredClone(traces) as never;
      },
    },
  };
}

/** Lone surrogates cannot be written as UTF-8: encoders write U+FFFD instead. */
export function asUtf8(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

export { existsSync };

/** What every format's reader test reads back: the hostile corpus and the real reference sample. */
export const READER_CASES = [
  { label: 'the hostile corpus', load: () => collectParts(hostileSource(), hostileRevisionIds()) },
  {
    label: 'the reference sample',
    load: () => {
      const { source, revisionIds } = referenceSource();
      return collectParts(source, revisionIds);
    },
  },
];
