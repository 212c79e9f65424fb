import type { FastifyReply } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { ExportSlots } from './export-slots.js';
import { pageBytes } from './page-bytes.js';

/** A page counts as expensive once its JSON passes this share of a page's bytes (pageBytes). */
export const EXPENSIVE_SHARE_OF_PAGE = 1 / 8;

/**
 * Reads of the service API that cost the server as much as an export: a page of history whose
 * versions are large, a whole as-of listing (every record rebuilt from its versions). They take the
 * server's one pool of slots for expensive work, the web app's exports, reports, comparisons and
 * impact checks among them (createServices builds it once); beyond, 429 with Retry-After. Small
 * reads never take a slot.
 */
export class ExpensiveReads {
  constructor(readonly slots: ExportSlots) {}

  /**
   * Takes a slot for the principal's user (or throws the 429) and gives it back when the reply
   * closes: when it was sent, or when the client went away, also after an error.
   */
  hold(principal: Principal, reply: FastifyReply): void {
    const release = this.slots.take(ExportSlots.userOf(principal));
    reply.raw.once('close', release);
  }
}

/** Whether a page of about `bytes` of JSON is an expensive read. */
export function isExpensivePage(bytes: number, budget = pageBytes()): boolean {
  return bytes >= budget * EXPENSIVE_SHARE_OF_PAGE;
}
