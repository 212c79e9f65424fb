import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Conditional GETs (RFC 9110 §13): a strong ETag on the answer, and 304 Not Modified, without a
 * body, when the client's If-None-Match names it. Answers are per API key's tenant, so shared
 * caches keep none (`private`) and every use is revalidated (`no-cache`).
 */

/** A strong entity tag: the SHA-256 of what the answer depends on, base64url, quoted. */
export function entityTag(parts: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(parts)).digest('base64url')}"`;
}

/**
 * Whether If-None-Match matches `etag`: `*`, or a list of tags compared weakly (§13.1.2: `W/"x"`
 * matches `"x"`, as the RFC asks for If-None-Match).
 */
export function noneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

/**
 * Sets the ETag and caching headers; true when the request's If-None-Match matches, and the reply
 * is then already sent: 304 without a body to a GET, 412 to any other method (RFC 9110 §13.1.2; a
 * POST that only reads, such as a trace batch, is answered so too). The caller computes the tag
 * before it reads what it answers, so a change in between gives a tag older than the body (one
 * needless download later), never a newer one (a change missed).
 */
export function answeredNotModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  void reply.header('etag', etag).header('cache-control', 'private, no-cache');
  if (!noneMatch(request.headers['if-none-match'], etag)) return false;
  if (request.method === 'GET' || request.method === 'HEAD') void reply.code(304).send();
  else
    void reply.code(412).send({
      detail: 'Not modified: nothing this answers changed since the ETag in If-None-Match.',
    });
  return true;
}
