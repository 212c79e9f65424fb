import type { FastifyError, FastifyInstance } from 'fastify';
import { HttpError } from './errors.js';
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
