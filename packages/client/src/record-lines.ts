/**
 * The records of an answer that has one record a line, as RXS writes a records array (a changes
 * page: `{…,"records":[` then `{record},` lines, the last without its comma, then `]` and the
 * rest), parsed one line at a time so that each record's JSON text is known without serialising
 * the record again (`recordText`; the sync's kept changes store it as it came).
 */
const texts = new WeakMap<object, string>();

const RECORDS_OPEN = '"records":[';
const COMMA = 0x2c;
const CARRIAGE_RETURN = 0x0d;

/** The JSON text record `record` arrived as, when `parseRecordLines` parsed it from its own line. */
export function recordText(record: object): string | undefined {
  return texts.get(record);
}

/**
 * Parses `text` as `JSON.parse` does, with the same result. When its `records` array has one
 * record a line, each line is parsed by itself and its text kept (`recordText`); any other layout
 * is parsed whole. Throws what `JSON.parse` throws for text that is not JSON.
 */
export function parseRecordLines(text: string): unknown {
  try {
    const parsed = byLines(text);
    if (parsed !== undefined) return parsed;
  } catch {
    // Not the layout looked for, or not JSON: JSON.parse decides, and says why.
  }
  return JSON.parse(text);
}

/** In place of the records, to find where the array parsed apart sits in the rest. */
const MARKER = '\u0000rxs records parsed by line';

function byLines(text: string): unknown {
  const firstBreak = text.indexOf('\n');
  if (firstBreak === -1) return undefined;
  const headEnd = text.charCodeAt(firstBreak - 1) === CARRIAGE_RETURN ? firstBreak - 1 : firstBreak;
  if (!text.startsWith(RECORDS_OPEN, headEnd - RECORDS_OPEN.length)) return undefined;
  // No line of a record starts with `]` (JSON strings hold no line breaks): this ends the array.
  const close = text.indexOf('\n]', firstBreak);
  if (close === -1) return undefined;
  const records: object[] = [];
  const lines: string[] = [];
  for (let at = firstBreak + 1; at <= close;) {
    const end = text.indexOf('\n', at);
    let last = end;
    if (text.charCodeAt(last - 1) === CARRIAGE_RETURN) last--;
    // Every line but the last ends with the comma between two records, and only those.
    const comma = text.charCodeAt(last - 1) === COMMA;
    if (comma !== end < close) return undefined;
    const line = text.slice(at, comma ? last - 1 : last);
    const record: unknown = JSON.parse(line);
    if (typeof record !== 'object' || record === null || Array.isArray(record)) return undefined;
    records.push(record);
    lines.push(line);
    at = end + 1;
  }
  // The rest, with a marker where the records were: it must be the top level's `records`.
  const rest: unknown = JSON.parse(
    `${text.slice(0, firstBreak)}${JSON.stringify(MARKER)}]${text.slice(close + 2)}`,
  );
  const array = (rest as { records?: unknown } | null)?.records;
  if (!Array.isArray(array) || array.length !== 1 || array[0] !== MARKER) return undefined;
  for (let i = 0; i < records.length; i++) texts.set(records[i]!, lines[i]!);
  (rest as { records: object[] }).records = records;
  return rest;
}
