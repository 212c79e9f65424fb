import type { DocumentDownloadFormat, ExportFormat, ValidationErrorItem } from '@rxs/web-api';
import { ApiError, csrfHeaders, withQuery } from './api';

/** What `/api/export` takes: revision ids (comma separated), the format, and the options. */
export interface ExportRequest {
  revisions: string;
  format: ExportFormat | DocumentDownloadFormat;
  traces: boolean;
  labels: boolean;
  /** The moment to export as of (a baseline's): the file equals the export taken then. */
  as_of?: string;
  /** A mapping file's text; sent in a POST body, since it can be long. */
  mapping?: string;
  /** `relation-type`: links named by relation type alone, not by the trace model's roles. */
  links_by?: 'role' | 'relation-type';
}

/** The export's warnings (values cut or changed to fit the format), sent as URI-encoded JSON. */
function warningsOf(response: Response): string[] {
  const header = response.headers.get('x-rxs-export-warnings');
  if (!header) return [];
  try {
    const warnings: unknown = JSON.parse(decodeURIComponent(header));
    return Array.isArray(warnings) ? warnings.map(String) : [];
  } catch {
    return ['The export sent warnings this page could not read; the file lists them.'];
  }
}

function fileNameOf(response: Response, fallback: string): string {
  const header = response.headers.get('content-disposition') ?? '';
  return /filename="([^"]+)"/.exec(header)?.[1] ?? fallback;
}

/**
 * Asks the server for an export and hands the file to the browser as a download. The server
 * writes the whole file before answering, so a failure is an error here, never a broken file.
 */
export async function downloadExport(
  request: ExportRequest,
): Promise<{ name: string; size: number; warnings: string[] }> {
  const response = await fetchFile('/api/export', { ...request }, 'export');
  const blob = await response.blob();
  const name = fileNameOf(response, `rxs-export.${request.format}`);
  saveBlob(blob, name);
  return { name, size: blob.size, warnings: warningsOf(response) };
}

/** Downloads `path?query` as a file (the name from Content-Disposition, else `fallback`). */
export async function downloadFile(
  path: string,
  query: Record<string, string> & { mapping?: string },
  fallback: string,
): Promise<{ name: string; size: number }> {
  const response = await fetchFile(path, query, 'download');
  const blob = await response.blob();
  const name = fileNameOf(response, fallback);
  saveBlob(blob, name);
  return { name, size: blob.size };
}

/**
 * GET `path?query`, or, with a mapping file (it can be long), a POST of the same as a JSON body
 * with the CSRF token; a refusal is an ApiError with the server's words.
 */
async function fetchFile(
  path: string,
  query: { mapping?: string } & Record<string, string | boolean | undefined>,
  what: string,
): Promise<Response> {
  const { mapping, ...rest } = query;
  const response = mapping?.trim()
    ? await fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...csrfHeaders() },
        body: JSON.stringify(query),
        credentials: 'same-origin',
      })
    : await fetch(withQuery(path, rest), { credentials: 'same-origin' });
  if (!response.ok) throw await failureOf(response, `The ${what} failed (${response.status}).`);
  return response;
}

/** Hands a blob to the browser as a download named `name`. */
function saveBlob(blob: Blob, name: string): void {
  const href = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = href;
  anchor.download = name;
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

/** The server's `detail` of a refused download, else `fallback`. */
async function failureOf(response: Response, fallback: string): Promise<ApiError> {
  const body = (await response.json().catch(() => ({}))) as { detail?: unknown };
  return new ApiError(
    response.status,
    typeof body.detail === 'string' || Array.isArray(body.detail)
      ? (body.detail as string | ValidationErrorItem[])
      : fallback,
  );
}
