import { Type } from '@sinclair/typebox';
import { ObjectId, ValidationErrorItem } from '@rxs/contract';

const detail = (description: string) => Type.Object({ detail: Type.String() }, { description });

/** The error answers every authenticated route may give, for the OpenAPI document. */
export const errorResponses = {
  401: detail('API key missing, invalid, expired or revoked'),
  403: detail("The key's user lacks permission for the operation"),
  404: detail('Object not found'),
  422: Type.Object({ detail: Type.Array(ValidationErrorItem) }, { description: 'Validation error' }),
  429: detail(
    'Too many requests for this key (or failed authentications from this address), or too many full listings at once; see Retry-After and the RateLimit-* headers',
  ),
};

/** The further answers of routes that take a body. */
export const bodyErrorResponses = {
  413: detail('The request body is larger than the limit'),
  415: detail('The request body is not JSON (Content-Type: application/json)'),
  507: detail("The server's disk is full: nothing was saved; retry once space is freed"),
};

/** Routes that change an object which may be read-only, approved or changed meanwhile. */
export const conflictResponse = {
  409: detail('The object is read-only, already approved, or changed meanwhile'),
};

export const apiKeySecurity = [{ apiKey: [] }];

export const RevisionParams = Type.Object({ kt_revision_id: ObjectId });
export const RecordParams = Type.Object({ id: ObjectId });
export const TraceParams = Type.Object({ trace_id: ObjectId });

/** The request header of a conditional GET (http/conditional.ts). */
export const IfNoneMatchHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      maxLength: 4096,
      description: 'The ETag of an earlier answer: 304 without a body when nothing changed since',
    }),
  ),
});

export const IdempotencyKeyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'RXS: a key of your own (1-255 visible ASCII characters, e.g. a UUID) that makes a retry safe: the same key with the same request within 24 hours answers the first success again (header Idempotent-Replayed: true) without writing, or 410 when the record it wrote was deleted since; with another request, 422',
    }),
  ),
});

/** 304 of a conditional GET: no body; the ETag header is the current one. */
export const NotModified = Type.Null({
  description: 'Not modified: unchanged since the ETag in If-None-Match',
});
