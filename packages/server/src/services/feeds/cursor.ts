import { createHash } from 'node:crypto';
import { unprocessable, validationItem } from '../../http/errors.js';

/**
 * The cursor of a changes feed: where in a counter a client stands (a revision's listing counter
 * for records, the tenant's trace counter for traces). `seq` is the counter value up to which every
 * change was delivered; with `after`, the changes at `seq` itself were delivered up to that id (a
 * page may end inside one counted step, since a re-approval's move counts as one step for thousands
 * of records).
 *
 * Opaque to clients and bound to the tenant and the feed (`scope`: the revision id, or `traces`):
 * it carries a digest of both (not their ids), so a cursor used with another feed or by another
 * tenant is refused, not answered.
 */
export interface ChangesCursor {
  seq: number;
  after?: string;
}

const VERSION = 'c1';

function binding(tenantId: string, scope: string): string {
  return createHash('sha256').update(`${tenantId}\u0000${scope}`).digest('base64url').slice(0, 16);
}

export function encodeCursor(tenantId: string, scope: string, cursor: ChangesCursor): string {
  const text = [VERSION, String(cursor.seq), cursor.after ?? '', binding(tenantId, scope)].join('.');
  return Buffer.from(text, 'utf8').toString('base64url');
}

function badCursor(message: string): never {
  throw unprocessable([validationItem(['query', 'since'], message, 'value_error')]);
}

/**
 * The cursor a client sent, checked against the tenant, the feed and the counter now (a cursor
 * past it comes from another database or was made up): 422 for anything that is not one of ours.
 */
export function decodeCursor(
  text: string,
  tenantId: string,
  scope: string,
  counterNow: number,
): ChangesCursor {
  const restart = 'Start again without "since" to get the whole listing and a fresh cursor.';
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text))
    badCursor(
      `"since" is not a cursor of this feed (a cursor is the "cursor" of an earlier answer). ${restart}`,
    );
  const parts = Buffer.from(text, 'base64url').toString('utf8').split('.');
  const [version, seqText, after, bound] = parts;
  if (parts.length !== 4 || version !== VERSION || !/^(0|[1-9][0-9]{0,15})$/.test(seqText!))
    badCursor(
      `"since" is not a cursor of this feed (a cursor is the "cursor" of an earlier answer). ${restart}`,
    );
  if (after !== '' && !/^[0-9a-f]{24}$/.test(after!))
    badCursor(`"since" is not a cursor of this feed. ${restart}`);
  if (bound !== binding(tenantId, scope))
    badCursor(
      `"since" is a cursor of another feed (of another revision, or of another tenant): a cursor only continues the feed it came from. ${restart}`,
    );
  const seq = Number(seqText);
  if (seq > counterNow)
    badCursor(
      `"since" points past the newest change of this feed: it was not given by this service's database. ${restart}`,
    );
  return after ? { seq, after } : { seq };
}
