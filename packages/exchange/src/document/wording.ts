import {
  isReleased,
  type BaselineDocument,
  type DocumentRecord,
  type DocumentSubject,
  type LinkedRecord,
  type RecordChange,
} from './model.js';

/** The words both renderers print, so that the DOCX and the PDF of a baseline say the same. */

export const NOT_RELEASED = 'NOT RELEASED';

export const HEADINGS = {
  signatures: 'Signatures',
  matrix: 'Traceability matrix',
  coverage: 'Coverage summary',
  changes: 'Change summary',
} as const;

/** "2026-08-11 09:30:00 UTC" from an ISO 8601 moment; a text that is no moment stays as it is. */
export function momentText(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function subjectTitle(subject: DocumentSubject): string {
  return subject.kind === 'baseline' ? `Baseline ${subject.name}` : 'Current state (no baseline)';
}

/** The cover page's lines after the title: label and value. */
export function coverLines(document: BaselineDocument): [string, string][] {
  const { subject } = document;
  return [
    ['Tenant', document.tenant],
    ['Baseline', subject.kind === 'baseline' ? subject.name : 'none: the records as they are now'],
    ['Moment', momentText(subject.moment)],
    ['Status', subject.kind === 'baseline' ? subject.status : NOT_RELEASED.toLowerCase()],
    ['Generated', momentText(document.generatedAt)],
  ];
}

/** The running header of every page: the subject, and "NOT RELEASED" while it is not. */
export function pageHeader(document: BaselineDocument): string {
  const title = `${document.tenant} · ${subjectTitle(document.subject)}`;
  return isReleased(document.subject) ? title : `${NOT_RELEASED} · ${title}`;
}

export function linkedText(records: readonly LinkedRecord[]): string {
  return records.map((r) => (r.suspect ? `${r.readableId} (suspect)` : r.readableId)).join(', ');
}

export const SIGNATURE_COLUMNS = ['Signer', 'Meaning', 'Signed at'] as const;
export const COVERAGE_COLUMNS = ['Rule', 'Covered', 'Percent', 'Not covered'] as const;

export function noSignatures(document: BaselineDocument): string {
  return isReleased(document.subject) ? 'No signatures were required.' : 'Not signed yet.';
}

export function changesIntro(against: string | undefined): string {
  return against === undefined
    ? 'There is no earlier released baseline: there is nothing to compare with.'
    : `Changes against the released baseline ${against}.`;
}

/** The closing line of a change summary: the changes listed by kind, and those counted but not listed. */
export function changesCounts(counts: Record<RecordChange['kind'], number>, omitted = 0): string {
  const listed = `${counts.added} added, ${counts.removed} removed, ${counts.changed} changed.`;
  return omitted > 0
    ? `${listed} ${omitted} more ${omitted === 1 ? 'change is' : 'changes are'} counted but not listed.`
    : listed;
}

/**
 * A record as headings and lists name it: its readable id and title, the id once where the title
 * begins with it ("REQ_001 — Pump" rather than "REQ_001 REQ_001 — Pump").
 */
export function recordName(readableId: string, title: string): string {
  const repeats = title.startsWith(readableId) && !/^[\p{L}\p{N}_]/u.test(title.slice(readableId.length));
  return repeats ? title : `${readableId} ${title}`.trimEnd();
}

/** A record's heading: its number in the document, then its name. */
export function recordHeading(number: string, record: Pick<DocumentRecord, 'readableId' | 'title'>): string {
  return `${number} ${recordName(record.readableId, record.title)}`;
}

/** One change of a change summary as its list shows it. */
export function changeLine(change: RecordChange): string {
  return `${change.kind}: ${recordName(change.readableId, change.title)} (${change.topic})`;
}
