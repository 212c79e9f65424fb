import type { Writable } from 'node:stream';
import type { Baseline } from '@rxs/contract';
import type { DocumentFormat } from '@rxs/exchange';
import type { ExportMapping, ExportSource, ExportWriter } from '@rxs/exchange/export';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services/index.js';
import { documentChanges, type DocumentedState } from './document-changes.js';

export const DOCUMENT_CONTENT_TYPES: Record<DocumentFormat, string> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pdf: 'application/pdf',
};

/**
 * What one document download may render: a PDF of megabytes of text takes the CPU for minutes,
 * which a request must not. Larger documents are made by `rxs export --format pdf|docx`.
 */
export const WEB_DOCUMENT_LIMITS = { maxTextBytes: 16 * 1024 * 1024, maxRecordBytes: 512 * 1024 };

export const isDocumentFormat = (format: string): format is DocumentFormat =>
  Object.hasOwn(DOCUMENT_CONTENT_TYPES, format);

/**
 * The writer of a DOCX or PDF document for an output given later, as `rxs export --format docx|pdf`
 * makes it: the tenant's name on the cover, the baseline's status and signatures, coverage by the
 * tenant's trace model as it was at the export's moment (unless a mapping file names the links),
 * and the changes since the previous released baseline. Everything but the records is read here,
 * before the file is begun (the changes read every record of both sides: the caller holds an
 * export slot); the writer module (fonts, renderers) is loaded only for a document.
 */
export async function documentWriterFor(
  format: DocumentFormat,
  run: {
    services: Services;
    principal: Principal;
    /** The export's source, reading as of the export's moment. */
    source: ExportSource;
    state: DocumentedState;
    mapping: ExportMapping | undefined;
  },
): Promise<(out: Writable, tempDir: string) => ExportWriter> {
  const { services, principal, state, mapping } = run;
  const { DocumentWriter } = await import('@rxs/exchange');
  const [tenant, model, changes] = await Promise.all([
    services.accounts.getTenant(principal.tenantId),
    mapping ? undefined : run.source.getTraceRoles?.({}),
    documentChanges(services, principal, state, mapping),
  ]);
  const baseline: Baseline | undefined = 'baseline' in state ? state.baseline : undefined;
  return (out, tempDir) =>
    new DocumentWriter(format, out, {
      tenant: tenant.name,
      ...(baseline && { baseline }),
      ...(model && model.length > 0 && { coverage: { model } }),
      changes,
      tempDir,
      limits: WEB_DOCUMENT_LIMITS,
    });
}
