import type { FastifyReply } from 'fastify';
import { unprocessable, validationItem } from '../../http/errors.js';
import { jsonObjectStream } from '../../http/json-array-stream.js';

/** `since` for a feed that starts at the newest change, without the listing (`from=now`). */
export const NOW = Symbol('now');

/** Where a request starts its feed: a cursor, `from=now`, or (neither) the beginning. 422 for both. */
export function feedStart(
  since: string | undefined,
  from: 'now' | undefined,
): string | typeof NOW | undefined {
  if (since !== undefined && from !== undefined)
    throw unprocessable([
      validationItem(
        ['query', 'from'],
        '"from" starts a feed; with "since" the feed goes on from there. Send one of them.',
        'value_error',
      ),
    ]);
  return since ?? (from === 'now' ? NOW : undefined);
}

/**
 * Sends a feed page: `head` opens the object up to its streamed array's name, the array's lines
 * follow one per line, then `removed` (filled while the lines were read) closes it. The cursor goes
 * into the `RXS-Next-Cursor` header too; a page is never cached.
 */
export function sendFeedPage(
  reply: FastifyReply,
  page: { cursor: string; lines: AsyncIterable<Buffer | string>; removed: string[] },
  head: string,
): FastifyReply {
  void reply
    .type('application/json; charset=utf-8')
    .header('rxs-next-cursor', page.cursor)
    .header('cache-control', 'private, no-store');
  return reply.send(jsonObjectStream(head, page.lines, () => `,"removed":${JSON.stringify(page.removed)}}`));
}
