import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import { TooManyRequests } from './rate-limit.js';
import { toValidationItems } from './validation.js';

/**
 * The one place errors become responses: every error body is `{detail}` (a sentence, or for 422 the
 * array of problems). Bad input is always a 4xx; only a fault of our own is a 500, and it is logged.
 */
export function registerErrorHandling(app: FastifyInstance, limits: { bodyLimit: number }): void {
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({
      detail: `Not found: ${request.method} ${request.url.split('?')[0]} is not a path of this service.`,
    });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof TooManyRequests) {
      void reply.headers({ ...error.headers, 'retry-after': String(error.retryAfterSeconds) });
    }
    if (error instanceof HttpError) {
      return reply.code(error.statusCode).send({ detail: error.detail });
    }
    if (error.validation) {
      return reply
        .code(422)
        .send({ detail: toValidationItems(error.validation as never, error.validationContext ?? 'body') });
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send({
          detail: `The request body is larger than the limit of ${limits.bodyLimit} bytes. Send less data per request.`,
        });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send({
          detail: `Unsupported content type "${request.headers['content-type'] ?? ''}". Send JSON with "Content-Type: application/json".`,
        });
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return reply.code(422).send({
          detail: [{ loc: ['body'], msg: 'The request body is not valid JSON.', type: 'json_invalid' }],
        });
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.code(400).send({ detail: 'The Content-Length header does not match the body.' });
    }
    if (isDiskFull(error)) {
      request.log.error({ err: error }, 'write refused: the disk is full');
      return reply.code(507).send({
        detail:
          "The server's disk is full, so this change was not saved (nothing saved before is lost, and reading still works). Retry once the operator has freed space.",
      });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ detail: error.message });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({
      detail:
        'The server failed to handle this request. It has been logged; retry later or contact the operator with the request id.',
    });
  });
}

/** SQLite could not grow its files (SQLITE_FULL, or a write that failed for want of space); PostgreSQL's disk_full. */
function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_FULL' || code === '53100' || (error as NodeJS.ErrnoException).errno === -28;
}

/** Fastify's answers for URLs the router cannot take, in the contract's `{detail}` shape. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      void reply.code(400).send({
        detail:
          'The URL is not valid: a path segment has a broken percent-encoding. Encode ids and names with encodeURIComponent.',
      });
      return;
    case 'FST_ERR_MAX_PARAM_LENGTH':
      void reply.code(414).send({
        detail: 'A path parameter is longer than 200 characters; no id of this service is that long.',
      });
      return;
    default:
      void reply.code(400).send({ detail: `The request could not be routed: ${error.message}` });
  }
}

/**
 * Requests Node's HTTP parser refuses (malformed, headers too large, too slow) never reach Fastify:
 * answer them on the socket in the `{detail}` shape, then close it, as Node would.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [
          408,
          "The request took too long to arrive (the server's request time limit, RXS_REQUEST_TIMEOUT_MS). Send it again, all at once.",
        ]
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431,
            'The request headers are larger than 64 KiB. Send fewer or shorter headers (long id lists belong in a POST body).',
          ]
        : [400, `The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}); it was refused.`];
  const body = JSON.stringify({ detail });
  // A response already under way on this socket cannot be followed by another one.
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !response?.headersSent) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
