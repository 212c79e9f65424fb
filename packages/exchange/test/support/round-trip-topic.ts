import { readFileSync } from 'node:fs';
import { createClient, type RxsClient } from '@rxs/client';
import { startTestServer, type TestServer } from '../../../server/test/harness.js';
import { approvedTopic } from '../../../server/test/support/topics.js';
import { exportSourceOf } from '../../src/export/client-source.js';
import { importRecords, openRowSource, type ImportReport, type OpenSourceOptions } from '../../src/index.js';
import { collectParts, writeFile } from './spreadsheet-readers.js';

/**
 * A topic on a real server (in-process) holding the demo's real requirements and records whose
 * values every spreadsheet program is tempted to change: line breaks, quotes, separators, text
 * that looks like a formula, a number or a date, leading zeros, accents and CJK, beside typed
 * numbers, checkboxes and dates. A round trip exports it, lets a program edit the file, imports it
 * back into the same topic and compares the records before and after, value by value.
 */

const samples = new URL('../../../server/src/demo/samples/', import.meta.url);
const sample = (file: string) => JSON.parse(readFileSync(new URL(file, samples), 'utf8'));

/** The demo's requirements form, with a code (text), a number, a checkbox and a date beside it. */
function schema() {
  const topic = sample('kt_system_requirements.json');
  return {
    ...topic.knowledge_topic_schema,
    components: [
      ...topic.knowledge_topic_schema.components,
      { type: 'textfield', key: 'code', label: 'Code' },
      { type: 'number', key: 'risk_score', label: 'Risk score', validate: { min: 0, max: 10 } },
      { type: 'checkbox', key: 'safety', label: 'Safety relevant' },
      { type: 'datetime', key: 'due', label: 'Due', subtype: 'date', dateLabel: 'Due' },
    ],
  };
}

/** Text a spreadsheet splits, evaluates, trims or re-encodes if it can. */
const UGLY_TEXTS = [
  'line one\nline two\r\nline three',
  'a "quoted" value, with commas; and semicolons;\tand a tab',
  '=SUM(A1:A3) looks like a formula',
  '+49 30 1234, -5 °C, @mention',
  'Ärger über Öfen, naïve café, ß',
  '滅菌温度は121°C ± 2°Cであること 🧪',
  '  leading and trailing spaces  ',
  "it's 'quoted' too",
];

/** The record whose texts hold a CRLF (the first of UGLY_TEXTS). */
export const UGLY_CRLF = 'Ugly-1';

/** Codes that look like numbers, dates or booleans: text all the same, and must stay text. */
const CODES = ['007', '00123', '1.0', '2026-03-10', 'TRUE', '1/2', '12,50', '1E5'];

function records(): { name: string; data: Record<string, unknown> }[] {
  const real = (
    sample('records_system_requirements.json') as { name: string; data: Record<string, unknown> }[]
  ).map((record, i) => ({
    name: record.name,
    data: {
      ...record.data,
      code: `SR-${String(i + 1).padStart(4, '0')}`,
      risk_score: i * 2.5,
      safety: i % 2 === 0,
      due: `2026-0${i + 1}-15`,
    },
  }));
  const ugly = UGLY_TEXTS.map((text, i) => ({
    name: `Ugly-${i + 1}`,
    data: {
      name: `REQ_1${String(i).padStart(2, '0')} — ${text.split(/\r?\n/)[0]!.trim()}`,
      description: text,
      justification: `${text}\n=${i}+1`,
      type: 'regulatory',
      checklist_kgd0ri: i % 2 ? ['Equipment', 'Essential Performance (IEC 60601-1)'] : ['Infrastructure'],
      select_1jzpmh: i % 2 ? undefined : 'buildings, workspace and associated utilities',
      source: 'Functional & Performance Requirements',
      priority: ['low', 'medium', 'high'][i % 3],
      code: CODES[i % CODES.length],
      risk_score: i % 3 === 0 ? 7 : 0.5 + i,
      safety: i % 3 === 0,
      due:
        i % 4 === 0
          ? undefined
          : `2026-${String(i + 1).padStart(2, '0')}-${String(27 + (i % 3)).padStart(2, '0')}`,
    },
  }));
  return [...real, ...ugly];
}

/** A record as the comparison sees it: its name and data, by _id. */
export interface RecordState {
  name: string;
  version: string;
  data: Record<string, unknown>;
}

/** One difference between two states of the topic. */
export type Change =
  { record: string; key: string; from: unknown; to: unknown } | { created: string } | { deleted: string };

export interface RoundTripTopic {
  revision: string;
  /** The records' _id by record name. */
  ids: Map<string, string>;
  /** Writes the topic's export in `format` to `file`; its path. */
  exportFile(format: 'csv' | 'xlsx', file: string): Promise<string>;
  importFile(file: string, options?: OpenSourceOptions): Promise<ImportReport>;
  state(): Promise<Map<string, RecordState>>;
}

export interface RoundTripServer {
  server: TestServer;
  client: RxsClient;
  /** A new topic holding the records: one per round trip, so that each starts from version 1.0. */
  topic(name: string): Promise<RoundTripTopic>;
  close(): Promise<void>;
}

export async function startRoundTripServer(): Promise<RoundTripServer> {
  const server = await startTestServer();
  const client = createClient({
    techdocUrl: server.url,
    recordsUrl: server.url,
    tracerUrl: server.url,
    apiKey: server.ownerKey,
  });
  return { server, client, topic: (name) => createTopic(server, client, name), close: () => server.close() };
}

async function createTopic(server: TestServer, client: RxsClient, name: string): Promise<RoundTripTopic> {
  const revision = await approvedTopic(server, name, { schema: schema() });
  const ids = new Map<string, string>();
  for (const record of records()) {
    const created = await server.api('POST', '/records/', {
      body: {
        name: record.name,
        form: {},
        data: record.data,
        context: { knowledge_unit_topic_id: revision },
      },
    });
    if (created.status !== 201) throw new Error(`POST /records/ answered ${created.status}: ${created.text}`);
    ids.set(record.name, created.body._id);
  }
  return {
    revision,
    ids,
    async state() {
      const listed = await server.api(
        'GET',
        `/records/?context__knowledge_unit_topic_id=${revision}&limit=1000`,
      );
      if (listed.status !== 200) throw new Error(`GET /records/ answered ${listed.status}: ${listed.text}`);
      return new Map<string, RecordState>(
        (listed.body as { _id: string; name: string; version: string; data: Record<string, unknown> }[]).map(
          (r) => [r._id, { name: r.name, version: r.version, data: r.data }],
        ),
      );
    },
    async exportFile(format, file) {
      await writeFile(format, await collectParts(exportSourceOf(client), [revision]), file);
      return file;
    },
    importFile: (file, options) =>
      importRecords(client, openRowSource(file, options), { revisionId: revision }),
  };
}

/** What changed from `before` to `after`: each data value, each record created or deleted. */
export function changes(before: Map<string, RecordState>, after: Map<string, RecordState>): Change[] {
  const found: Change[] = [];
  for (const [id, old] of before) {
    const now = after.get(id);
    if (!now) {
      found.push({ deleted: id });
      continue;
    }
    if (old.name !== now.name) found.push({ record: id, key: '(name)', from: old.name, to: now.name });
    for (const key of new Set([...Object.keys(old.data), ...Object.keys(now.data)]))
      if (JSON.stringify(old.data[key]) !== JSON.stringify(now.data[key]))
        found.push({ record: id, key, from: old.data[key], to: now.data[key] });
  }
  for (const id of after.keys()) if (!before.has(id)) found.push({ created: id });
  return found;
}

/**
 * The changes besides those LibreOffice makes to every value with a CR: its cells keep line
 * breaks as LF only, so a CRLF or a lone CR comes back as LF (docs/formats/xlsx.md, csv.md).
 */
export function besidesLineBreaksAsLf(found: readonly Change[]): { changes: Change[]; records: Set<string> } {
  const records = new Set<string>();
  const rest = found.filter((change) => {
    if (!('key' in change) || typeof change.from !== 'string' || !change.from.includes('\r')) return true;
    if (change.to !== change.from.replace(/\r\n?/g, '\n')) return true;
    records.add(change.record);
    return false;
  });
  return { changes: rest, records };
}
