import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Sets `Link: <?...&after=ID>; rel="next"` when more items remain (`before=N` for listings that go
 * newest first). The target is a query-only reference, so it resolves against whatever path (and
 * proxy prefix) the client called.
 */
export function setNextLink(
  request: FastifyRequest,
  reply: FastifyReply,
  cursor: string | number | undefined,
  parameter: 'after' | 'before' = 'after',
): void {
  if (cursor === undefined || cursor === '') return;
  const params = new URLSearchParams(request.url.split('?')[1] ?? '');
  params.set(parameter, String(cursor));
  void reply.header('link', `<?${params.toString()}>; rel="next"`);
}
