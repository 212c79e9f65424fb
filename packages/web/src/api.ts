import type { ValidationErrorItem } from '@rxs/web-api';

/** An answer of the web API other than 2xx: the contract's `detail`, a sentence or 422 items. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationErrorItem[],
    readonly retryAfterSeconds?: number,
    /** The whole answer, for the few that carry more than `detail` (e.g. a sign-in's tenant choice). */
    readonly body?: unknown,
  ) {
    super(typeof detail === 'string' ? detail : detail.map((d) => d.msg).join('; '));
  }

  get items(): ValidationErrorItem[] {
    return Array.isArray(this.detail) ? this.detail : [];
  }
}

let csrfToken: string | undefined;
const signedOutListeners = new Set<() => void>();

/** The session's CSRF token, sent with every state-changing request. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** The CSRF header for a state-changing request made with `fetch` directly (downloads). */
export function csrfHeaders(): Record<string, string> {
  return csrfToken ? { 'x-csrf-token': csrfToken } : {};
}

/** Called when the server says the session is gone (expired, signed out elsewhere). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return send<T>(method, path, headers, body === undefined ? undefined : JSON.stringify(body));
}

/** Sends a request to `/api${path}` (with the CSRF token when it changes something) and reads its JSON answer. */
async function send<T>(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: BodyInit,
): Promise<T> {
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(`/api${path}`, { method, headers, body, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'The server cannot be reached. Check your connection and try again.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const detail = (parsed as { detail?: unknown } | undefined)?.detail;
    const retry = Number(response.headers.get('retry-after')) || undefined;
    const error = new ApiError(
      response.status,
      typeof detail === 'string' || Array.isArray(detail)
        ? (detail as string | ValidationErrorItem[])
        : `The server answered ${response.status} ${response.statusText}.`,
      retry,
      parsed,
    );
    if (response.status === 401 && path !== '/session') signedOutListeners.forEach((listener) => listener());
    throw error;
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => request<T>('GET', withQuery(path, query)),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  delete: <T = void>(path: string) => request<T>('DELETE', path),
  /** POSTs a file's bytes as the body (streamed by the browser), its name and options in the query. */
  upload: <T>(path: string, query: Query, file: Blob) =>
    send<T>(
      'POST',
      withQuery(path, query),
      { accept: 'application/json', 'content-type': 'application/octet-stream' },
      file,
    ),
};

/** The 422 items of a request body, by field name (`loc` `["body", name, ...]`), for forms of plain inputs. */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!(error instanceof ApiError)) return errors;
  for (const item of error.items) {
    if (item.loc[0] === 'body' && item.loc[1] !== undefined) errors[String(item.loc[1])] ??= item.msg;
  }
  return errors;
}

/** A sentence for any error, for banners. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
