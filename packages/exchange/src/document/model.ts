/**
 * What a baseline document holds, as the DOCX and PDF renderers read it: the cover, the signatures,
 * each topic's records, the traceability matrices with the coverage summary, and the changes since
 * the previous released baseline (when computed). Records, matrix rows and changes arrive as async iterables and
 * are read once, in order, so that a renderer never holds more than the one it is writing.
 * All texts are user text: renderers show them literally (see `visibleText`).
 */

/** A baseline's state in its review: only a released one is signed off and can never change. */
export type BaselineStatus = 'proposed' | 'released' | 'refused' | 'superseded';

/** What the document shows: a baseline as of its moment, or the records as they are now. */
export type DocumentSubject =
  | { kind: 'baseline'; name: string; /** ISO 8601 */ moment: string; status: BaselineStatus }
  | { kind: 'now'; /** ISO 8601: when the records were read */ moment: string };

export interface DocumentSignature {
  /** Who signed, as the document names them (display name and login, for instance). */
  signer: string;
  /** What the signature means: reviewed, approved, ... */
  meaning: string;
  /** ISO 8601 */
  signedAt: string;
}

export interface DocumentField {
  label: string;
  value: string;
}

/** A record at the other end of a link; a suspect link's record changed since it was reviewed. */
export interface LinkedRecord {
  readableId: string;
  suspect: boolean;
}

/** A record's links of one role ("verified by", "implements"), in the order they are shown. */
export interface DocumentLinks {
  role: string;
  records: LinkedRecord[];
}

export interface DocumentRecord {
  readableId: string;
  title: string;
  /** The fields by their labels, in the topic's form order. */
  fields: DocumentField[];
  links: DocumentLinks[];
}

export interface DocumentTopic {
  name: string;
  records: AsyncIterable<DocumentRecord> | Iterable<DocumentRecord>;
}

/** One row of a matrix: a record and, per column, the records it is linked to there. */
export interface MatrixRow {
  readableId: string;
  cells: LinkedRecord[][];
}

/** A traceability matrix: the records of one topic (rows) against linked topics or roles (columns). */
export interface TraceMatrix {
  title: string;
  /** What the rows are, the header of the first column: "System requirements". */
  rowHeader: string;
  columns: string[];
  rows: AsyncIterable<MatrixRow> | Iterable<MatrixRow>;
}

/** One coverage rule: how many of its source records have a counted link. */
export interface CoverageLine {
  rule: string;
  covered: number;
  total: number;
  /** covered / total in percent */
  percent: number;
  /** Readable ids of the source records without a counted link. */
  uncovered: string[];
}

export interface FieldChange {
  label: string;
  before: string;
  after: string;
}

export type RecordChange =
  | { kind: 'added' | 'removed'; topic: string; readableId: string; title: string }
  | { kind: 'changed'; topic: string; readableId: string; title: string; fields: FieldChange[] };

export interface ChangeSummary {
  /** The released baseline compared with; none when there is no earlier one. */
  against: string | undefined;
  changes: AsyncIterable<RecordChange> | Iterable<RecordChange>;
  /** Changes counted but not listed (a summary lists a bounded number); absent or 0 when all are listed. */
  omitted?: number;
}

export interface BaselineDocument {
  tenant: string;
  subject: DocumentSubject;
  /** ISO 8601: when the document was made. */
  generatedAt: string;
  signatures: DocumentSignature[];
  topics: AsyncIterable<DocumentTopic> | Iterable<DocumentTopic>;
  matrices: TraceMatrix[];
  coverage: CoverageLine[];
  /** Absent where the changes were not computed: the document then has no change summary section. */
  changes?: ChangeSummary;
}

/** Whether the document is of a released baseline; every other one says "not released" on each page. */
export function isReleased(subject: DocumentSubject): boolean {
  return subject.kind === 'baseline' && subject.status === 'released';
}
