import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Sets `Link: <?...&after=ID>; rel="next"` when more items remain. The target is a query-only
 * reference, so it resolves against whatever path (and proxy prefix) the client called.
 */
export function setNextLink(request: FastifyRequest, reply: FastifyReply, after: string | undefined): void {
  if (!after) return;
  const params = new URLSearchParams(request.url.split('?')[1] ?? '');
  params.set('after', after);
  void reply.header('link', `<?${params.toString()}>; rel="next"`);
}
